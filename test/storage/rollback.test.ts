import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, LimitExceededError, NotFoundError, type Storage } from '../../src/storage/types.ts';
import { accept, content, NO_LIMIT, openTestStorage, summarize } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
});
afterAll(async () => {
  await close();
});

const expr = (expression: string) => content({ expression });

describe('rollback', () => {
  it('restores changed content as a new published version', async () => {
    const rule = await storage.rules.create('acme', 'rb-1', 'R', expr('amount > 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept); // ruleset 1
    await storage.rules.update('acme', rule.id, 1, expr('amount > 2'));
    await storage.rules.publishRule('acme', rule.id, accept); // ruleset 2

    const { result, live } = await storage.rules.rollback('acme', 'rb-1', 1, NO_LIMIT, accept);
    expect(result).toEqual({ context: 'rb-1', rulesetVersion: 3, published: [rule.id], changes: { added: [], changed: ['R'], removed: [] } });
    expect(summarize(live)).toEqual({ R: 'amount > 1' });
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({
      status: 'published', version: 3, publishedVersion: 3, expression: 'amount > 1',
    });
    const versions = await storage.rules.versions('acme', rule.id);
    expect(versions?.map((v) => [v.version, v.expression])).toEqual([[3, 'amount > 1'], [2, 'amount > 2'], [1, 'amount > 1']]);
    expect(versions?.[0]?.publishedAt).not.toBeNull();
    expect(await storage.rules.liveRuleset('acme', 'rb-1')).toMatchObject({ rulesetVersion: 3 });
  });

  it('revives rules archived since and archives rules absent from N', async () => {
    const keep = await storage.rules.create('acme', 'rb-2', 'KEEP', expr('k == 1'), NO_LIMIT);
    const gone = await storage.rules.create('acme', 'rb-2', 'GONE', expr('g == 1'), NO_LIMIT);
    await storage.rules.publishContext('acme', 'rb-2', accept); // 1: KEEP, GONE
    await storage.rules.archive('acme', gone.id, accept); // 2: KEEP
    const added = await storage.rules.create('acme', 'rb-2', 'ADDED', expr('a == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', added.id, accept); // 3: KEEP, ADDED

    const { result, live } = await storage.rules.rollback('acme', 'rb-2', 1, NO_LIMIT, accept);
    expect(result).toEqual({ context: 'rb-2', rulesetVersion: 4, published: [gone.id], changes: { added: ['GONE'], changed: [], removed: ['ADDED'] } });
    expect(summarize(live)).toEqual({ KEEP: 'k == 1', GONE: 'g == 1' });
    expect(await storage.rules.get('acme', keep.id)).toMatchObject({ status: 'published', version: 1 });
    expect(await storage.rules.get('acme', gone.id)).toMatchObject({ status: 'published', version: 2, publishedVersion: 2 });
    expect(await storage.rules.get('acme', added.id)).toMatchObject({ status: 'archived', publishedVersion: null });

    // Forward again: version 3 had ADDED and not GONE.
    const forward = await storage.rules.rollback('acme', 'rb-2', 3, NO_LIMIT, accept);
    expect(forward.result).toEqual({ context: 'rb-2', rulesetVersion: 5, published: [added.id], changes: { added: ['ADDED'], changed: [], removed: ['GONE'] } });
    expect(summarize(forward.live)).toEqual({ ADDED: 'a == 1', KEEP: 'k == 1' });
    expect((await storage.rules.get('acme', gone.id))?.status).toBe('archived');
  });

  it('leaves drafts that were never live alone', async () => {
    const a = await storage.rules.create('acme', 'rb-3', 'A', expr('a == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', a.id, accept); // 1
    await storage.rules.update('acme', a.id, 1, expr('a == 2'));
    await storage.rules.publishRule('acme', a.id, accept); // 2
    const draft = await storage.rules.create('acme', 'rb-3', 'NEW', expr('n == 1'), NO_LIMIT);
    await storage.rules.rollback('acme', 'rb-3', 1, NO_LIMIT, accept);
    expect(await storage.rules.get('acme', draft.id)).toMatchObject({ status: 'draft', version: 1 });
  });

  it('makes a later publish unable to re-apply what was rolled back', async () => {
    const rule = await storage.rules.create('acme', 'rb-4', 'R', expr('r == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept); // 1
    await storage.rules.update('acme', rule.id, 1, expr('r == 2'));
    await storage.rules.publishRule('acme', rule.id, accept); // 2
    await storage.rules.update('acme', rule.id, 2, expr('r == 3')); // pending draft
    await storage.rules.rollback('acme', 'rb-4', 1, NO_LIMIT, accept); // 3, copies r == 1 as version 4
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ status: 'published', version: 4 });
    const again = await storage.rules.publishContext('acme', 'rb-4', accept);
    expect(again).toEqual({ result: { context: 'rb-4', rulesetVersion: 3, published: [], changes: { added: [], changed: [], removed: [] } } });
    await expect(storage.rules.publishRule('acme', rule.id, accept)).rejects.toBeInstanceOf(ConflictError);
    expect(summarize(await storage.rules.liveRuleset('acme', 'rb-4'))).toEqual({ R: 'r == 1' });
  });

  it('leaves a rule whose live content equals N’s content untouched, and still raises the version', async () => {
    const a = await storage.rules.create('acme', 'rb-5', 'A', expr('a == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', a.id, accept); // ruleset 1: version 1
    await storage.rules.update('acme', a.id, 1, expr('a == 2'));
    await storage.rules.publishRule('acme', a.id, accept); // ruleset 2: version 2
    await storage.rules.update('acme', a.id, 2, expr('a == 1'));
    await storage.rules.publishRule('acme', a.id, accept); // ruleset 3: version 3, the content of version 1
    await storage.rules.update('acme', a.id, 3, expr('a == 9')); // draft stays a draft
    const { result } = await storage.rules.rollback('acme', 'rb-5', 1, NO_LIMIT, accept);
    expect(result).toEqual({ context: 'rb-5', rulesetVersion: 4, published: [], changes: { added: [], changed: [], removed: [] } });
    expect(await storage.rules.get('acme', a.id)).toMatchObject({ status: 'draft', version: 4, publishedVersion: 3 });
  });

  it('is 409 when a revived code is taken by another rule, and changes nothing', async () => {
    const old = await storage.rules.create('acme', 'rb-6', 'CODE', expr('old == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', old.id, accept); // 1
    await storage.rules.archive('acme', old.id, accept); // 2
    const successor = await storage.rules.create('acme', 'rb-6', 'CODE', expr('new == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', successor.id, accept); // 3
    const other = await storage.rules.create('acme', 'rb-6', 'OTHER', expr('o == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', other.id, accept); // 4: CODE(successor), OTHER

    // Version 1 revives `old`, whose code `successor` holds; but `successor`
    // is absent from 1 and is archived by the same rollback: no clash.
    const ok = await storage.rules.rollback('acme', 'rb-6', 1, NO_LIMIT, accept); // 5
    expect(summarize(ok.live)).toEqual({ CODE: 'old == 1' });
    await storage.rules.rollback('acme', 'rb-6', 4, NO_LIMIT, accept); // 6: successor, OTHER again; old archived
    // A draft that keeps the code after the rollback is a clash.
    await storage.rules.archive('acme', successor.id, accept); // 7
    const squatter = await storage.rules.create('acme', 'rb-6', 'CODE', expr('squat == 1'), NO_LIMIT);
    await expect(storage.rules.rollback('acme', 'rb-6', 1, NO_LIMIT, accept)).rejects.toBeInstanceOf(ConflictError);
    await expect(storage.rules.rollback('acme', 'rb-6', 3, NO_LIMIT, accept)).rejects.toBeInstanceOf(ConflictError);
    expect(await storage.rules.liveRuleset('acme', 'rb-6')).toMatchObject({ rulesetVersion: 7 });
    expect(summarize(await storage.rules.liveRuleset('acme', 'rb-6'))).toEqual({ OTHER: 'o == 1' });
    expect((await storage.rules.get('acme', squatter.id))?.status).toBe('draft');
  });

  it('refuses the current version (409) and unknown versions (404)', async () => {
    const rule = await storage.rules.create('acme', 'rb-7', 'R', expr('r == 1'), NO_LIMIT);
    await expect(storage.rules.rollback('acme', 'rb-7', 1, NO_LIMIT, accept)).rejects.toBeInstanceOf(NotFoundError);
    await storage.rules.publishRule('acme', rule.id, accept);
    await expect(storage.rules.rollback('acme', 'rb-7', 1, NO_LIMIT, accept)).rejects.toBeInstanceOf(ConflictError);
    for (const unknown of [0, 2, -1, 1.5, Number.MAX_SAFE_INTEGER + 2]) {
      await expect(storage.rules.rollback('acme', 'rb-7', unknown, NO_LIMIT, accept)).rejects.toBeInstanceOf(NotFoundError);
    }
    await expect(storage.rules.rollback('acme', 'never-existed', 1, NO_LIMIT, accept)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('changes nothing when beforeCommit throws', async () => {
    const rule = await storage.rules.create('acme', 'rb-8', 'R', expr('r == 1'), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    await storage.rules.update('acme', rule.id, 1, expr('r == 2'));
    await storage.rules.publishRule('acme', rule.id, accept);
    await expect(storage.rules.rollback('acme', 'rb-8', 1, NO_LIMIT, () => { throw new Error('compile'); })).rejects.toThrow('compile');
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ version: 2, publishedVersion: 2 });
    expect(await storage.rules.liveRuleset('acme', 'rb-8')).toMatchObject({ rulesetVersion: 2, rules: [{ expression: 'r == 2' }] });
  });

  it('refuses to revive rules past maxRulesPerContext, and changes nothing', async () => {
    const a = await storage.rules.create('acme', 'rb-9', 'A', expr('a == 1'), 2);
    await storage.rules.create('acme', 'rb-9', 'B', expr('b == 1'), 2);
    await storage.rules.publishContext('acme', 'rb-9', accept); // 1: A, B
    await storage.rules.archive('acme', a.id, accept); // 2: B
    await storage.rules.create('acme', 'rb-9', 'C', expr('c == 1'), 2); // a draft: 2 rules, at the limit

    // Version 1 revives A beside B and the draft C: 3 rules.
    const refused = storage.rules.rollback('acme', 'rb-9', 1, 2, accept);
    await expect(refused).rejects.toBeInstanceOf(LimitExceededError);
    await expect(refused).rejects.toThrow('rolling back to ruleset version 1 would leave context "rb-9" with 3 rules, the maximum is 2');
    expect(await storage.rules.get('acme', a.id)).toMatchObject({ status: 'archived' });
    expect(await storage.rules.liveRuleset('acme', 'rb-9')).toMatchObject({ rulesetVersion: 2 });

    // With room for it, the same rollback goes through.
    const { result } = await storage.rules.rollback('acme', 'rb-9', 1, 3, accept);
    expect(result).toEqual({ context: 'rb-9', rulesetVersion: 3, published: [a.id], changes: { added: ['A'], changed: [], removed: [] } });
  });

  it('counts the rules a rollback archives as freed: a swap at the limit passes', async () => {
    const old = await storage.rules.create('acme', 'rb-10', 'OLD', expr('o == 1'), 1);
    await storage.rules.publishContext('acme', 'rb-10', accept); // 1: OLD
    await storage.rules.archive('acme', old.id, accept); // 2: nothing
    const next = await storage.rules.create('acme', 'rb-10', 'NEW', expr('n == 1'), 1);
    await storage.rules.publishRule('acme', next.id, accept); // 3: NEW

    const { result, live } = await storage.rules.rollback('acme', 'rb-10', 1, 1, accept);
    expect(result).toEqual({ context: 'rb-10', rulesetVersion: 4, published: [old.id], changes: { added: ['OLD'], changed: [], removed: ['NEW'] } });
    expect(summarize(live)).toEqual({ OLD: 'o == 1' });
    expect((await storage.rules.get('acme', next.id))?.status).toBe('archived');
  });
});
