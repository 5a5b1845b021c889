import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  LimitExceededError,
  NotFoundError,
  type Storage,
} from '../../src/storage/types.ts';
import { accept, content, NO_LIMIT, openTestStorage, summarize } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
});
afterAll(async () => {
  await close();
});

describe('create', () => {
  it('starts a rule as a draft at version 1 with nothing live', async () => {
    const rule = await storage.rules.create('acme', 'create-1', 'AMOUNT_POSITIVE', content({ tags: ['money'] }), NO_LIMIT);
    expect(rule).toMatchObject({
      context: 'create-1',
      code: 'AMOUNT_POSITIVE',
      name: 'Amount is positive',
      status: 'draft',
      version: 1,
      publishedVersion: null,
      publishedAt: null,
      tags: ['money'],
    });
    expect(rule.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rule.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await storage.rules.get('acme', rule.id)).toEqual(rule);
    expect(await storage.rules.liveRuleset('acme', 'create-1')).toBeNull();
  });

  it('keeps the content as sent, key order of nested JSON included', async () => {
    const schema = { type: 'object', properties: { zeta: { type: 'string' }, a: { type: 'number' } } };
    const rule = await storage.rules.create(
      'acme', 'create-2', 'SHAPE',
      content({ expression: undefined, schema, expectedValue: { z: 1, a: [1, 'x', null] }, description: 'd' }),
      NO_LIMIT,
    );
    const read = await storage.rules.get('acme', rule.id);
    expect(JSON.stringify(read?.schema)).toBe(JSON.stringify(schema));
    expect(JSON.stringify(read?.expectedValue)).toBe('{"z":1,"a":[1,"x",null]}');
    expect(read).not.toHaveProperty('expression');
    expect(read?.description).toBe('d');
  });

  it('refuses a code already used by a non-archived rule of the context, allows it elsewhere', async () => {
    await storage.rules.create('acme', 'create-3', 'DUP', content(), NO_LIMIT);
    await expect(storage.rules.create('acme', 'create-3', 'DUP', content(), NO_LIMIT)).rejects.toBeInstanceOf(ConflictError);
    await expect(storage.rules.create('acme', 'create-3b', 'DUP', content(), NO_LIMIT)).resolves.toMatchObject({ code: 'DUP' });
    await expect(storage.rules.create('globex', 'create-3', 'DUP', content(), NO_LIMIT)).resolves.toMatchObject({ code: 'DUP' });
  });

  it('frees the code of an archived rule', async () => {
    const first = await storage.rules.create('acme', 'create-4', 'REUSED', content(), NO_LIMIT);
    await storage.rules.archive('acme', first.id, accept);
    const second = await storage.rules.create('acme', 'create-4', 'REUSED', content(), NO_LIMIT);
    expect(second.id).not.toBe(first.id);
  });

  it('counts only non-archived rules against maxRulesPerContext', async () => {
    const a = await storage.rules.create('acme', 'create-5', 'A', content(), 2);
    await storage.rules.create('acme', 'create-5', 'B', content(), 2);
    await expect(storage.rules.create('acme', 'create-5', 'C', content(), 2)).rejects.toBeInstanceOf(LimitExceededError);
    await storage.rules.archive('acme', a.id, accept);
    await expect(storage.rules.create('acme', 'create-5', 'C', content(), 2)).resolves.toMatchObject({ code: 'C' });
  });
});

describe('update', () => {
  it('raises the version on each content change and keeps every version', async () => {
    const rule = await storage.rules.create('acme', 'update-1', 'R', content(), NO_LIMIT);
    const v2 = await storage.rules.update('acme', rule.id, 1, content({ expression: 'amount > 1' }));
    const v3 = await storage.rules.update('acme', rule.id, 2, content({ expression: 'amount > 2', name: 'Renamed' }));
    expect(v2).toMatchObject({ version: 2, status: 'draft', expression: 'amount > 1' });
    expect(v3).toMatchObject({ version: 3, name: 'Renamed', expression: 'amount > 2', createdAt: rule.createdAt });
    const versions = await storage.rules.versions('acme', rule.id);
    expect(versions?.map((v) => [v.version, v.expression, v.publishedAt])).toEqual([
      [3, 'amount > 2', null],
      [2, 'amount > 1', null],
      [1, 'amount > 0', null],
    ]);
  });

  it('drops optional fields the new content omits', async () => {
    const rule = await storage.rules.create('acme', 'update-2', 'R', content({ message: 'custom', when: 'x == 1' }), NO_LIMIT);
    const updated = await storage.rules.update('acme', rule.id, 1, content());
    expect(updated).not.toHaveProperty('message');
    expect(updated).not.toHaveProperty('when');
  });

  it.each([
    ['stale', 1],
    ['ahead', 7],
  ])('refuses a %s basedOnVersion', async (_label, basedOn) => {
    const rule = await storage.rules.create('acme', `update-3-${basedOn}`, 'R', content(), NO_LIMIT);
    await storage.rules.update('acme', rule.id, 1, content({ expression: 'amount > 5' }));
    await expect(storage.rules.update('acme', rule.id, basedOn, content())).rejects.toBeInstanceOf(ConflictError);
    expect((await storage.rules.get('acme', rule.id))?.version).toBe(2);
  });

  it('refuses to edit an archived rule', async () => {
    const rule = await storage.rules.create('acme', 'update-4', 'R', content(), NO_LIMIT);
    await storage.rules.archive('acme', rule.id, accept);
    await expect(storage.rules.update('acme', rule.id, 1, content())).rejects.toBeInstanceOf(ConflictError);
  });

  it('leaves the published version live until the edit is published', async () => {
    const rule = await storage.rules.create('acme', 'update-5', 'R', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    const edited = await storage.rules.update('acme', rule.id, 1, content({ expression: 'amount > 9' }));
    expect(edited).toMatchObject({ status: 'draft', version: 2, publishedVersion: 1 });
    expect(summarize(await storage.rules.liveRuleset('acme', 'update-5'))).toEqual({ R: 'amount > 0' });
    expect(summarize(await storage.rules.draftRuleset('acme', 'update-5'))).toEqual({ R: 'amount > 9' });
  });
});

describe('publishRule', () => {
  it('makes the latest version live and starts the ruleset at 1', async () => {
    const rule = await storage.rules.create('acme', 'pub-1', 'R', content(), NO_LIMIT);
    const seen: number[] = [];
    const { rule: published, result, live } = await storage.rules.publishRule('acme', rule.id, (next) => {
      seen.push(next.rulesetVersion);
      return `compiled ${next.rules.length}`;
    });
    expect(seen).toEqual([1]);
    expect(live).toBe('compiled 1');
    expect(result).toEqual({ context: 'pub-1', rulesetVersion: 1, published: [rule.id], changes: { added: ['R'], changed: [], removed: [] } });
    expect(published).toMatchObject({ status: 'published', version: 1, publishedVersion: 1 });
    expect(published.publishedAt).not.toBeNull();
    const live1 = await storage.rules.liveRuleset('acme', 'pub-1');
    expect(live1).toEqual({
      tenantId: 'acme',
      context: 'pub-1',
      rulesetVersion: 1,
      rules: [{ code: 'R', name: 'Amount is positive', severity: 'Error', fieldPath: 'amount', required: false, expression: 'amount > 0', priority: 0, enabled: true }],
    });
    const versions = await storage.rules.versions('acme', rule.id);
    expect(versions?.[0]?.publishedAt).toBe(published.publishedAt);
  });

  it('refuses a rule that is already live, and an archived one', async () => {
    const rule = await storage.rules.create('acme', 'pub-2', 'R', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    await expect(storage.rules.publishRule('acme', rule.id, accept)).rejects.toBeInstanceOf(ConflictError);
    await storage.rules.archive('acme', rule.id, accept);
    await expect(storage.rules.publishRule('acme', rule.id, accept)).rejects.toBeInstanceOf(ConflictError);
  });

  it('raises the ruleset version on each publish, not the rule version', async () => {
    const a = await storage.rules.create('acme', 'pub-3', 'A', content(), NO_LIMIT);
    const b = await storage.rules.create('acme', 'pub-3', 'B', content(), NO_LIMIT);
    expect((await storage.rules.publishRule('acme', a.id, accept)).result.rulesetVersion).toBe(1);
    expect((await storage.rules.publishRule('acme', b.id, accept)).result.rulesetVersion).toBe(2);
    await storage.rules.update('acme', a.id, 1, content({ expression: 'amount > 3' }));
    const third = await storage.rules.publishRule('acme', a.id, accept);
    expect(third.result.rulesetVersion).toBe(3);
    expect(third.rule).toMatchObject({ version: 2, publishedVersion: 2, status: 'published' });
    expect(summarize(await storage.rules.liveRuleset('acme', 'pub-3'))).toEqual({ A: 'amount > 3', B: 'amount > 0' });
  });

  it('leaves the old version live when beforeCommit throws', async () => {
    const rule = await storage.rules.create('acme', 'pub-4', 'R', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    await storage.rules.update('acme', rule.id, 1, content({ expression: 'amount > 100' }));
    const boom = new Error('does not compile');
    await expect(
      storage.rules.publishRule('acme', rule.id, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ status: 'draft', version: 2, publishedVersion: 1 });
    expect(await storage.rules.liveRuleset('acme', 'pub-4')).toMatchObject({ rulesetVersion: 1, rules: [{ expression: 'amount > 0' }] });
    expect((await storage.rules.versions('acme', rule.id))?.[0]?.publishedAt).toBeNull();
    // The failed attempt used no version number.
    expect((await storage.rules.publishRule('acme', rule.id, accept)).result.rulesetVersion).toBe(2);
  });

  it('awaits an asynchronous beforeCommit and rolls back when it rejects', async () => {
    const rule = await storage.rules.create('acme', 'pub-5', 'R', content(), NO_LIMIT);
    await expect(storage.rules.publishRule('acme', rule.id, async () => Promise.reject(new Error('nope')))).rejects.toThrow('nope');
    expect(await storage.rules.liveRuleset('acme', 'pub-5')).toBeNull();
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ status: 'draft' });
  });
});

describe('archive', () => {
  it('of a live rule raises the ruleset version and removes the rule from the live ruleset', async () => {
    const a = await storage.rules.create('acme', 'arch-1', 'A', content(), NO_LIMIT);
    const b = await storage.rules.create('acme', 'arch-1', 'B', content(), NO_LIMIT);
    await storage.rules.publishContext('acme', 'arch-1', accept);
    const { rule, live } = await storage.rules.archive('acme', a.id, accept);
    expect(rule).toMatchObject({ status: 'archived', version: 1, publishedVersion: null });
    expect(live).toMatchObject({ rulesetVersion: 2 });
    expect(summarize(await storage.rules.liveRuleset('acme', 'arch-1'))).toEqual({ B: 'amount > 0' });
    expect((await storage.rules.liveRuleset('acme', 'arch-1'))?.rulesetVersion).toBe(2);
    await storage.rules.archive('acme', b.id, accept);
    expect(await storage.rules.liveRuleset('acme', 'arch-1')).toEqual({ tenantId: 'acme', context: 'arch-1', rulesetVersion: 3, rules: [] });
  });

  it('of a never-live rule leaves the ruleset version unchanged and calls no beforeCommit', async () => {
    const live = await storage.rules.create('acme', 'arch-2', 'LIVE', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', live.id, accept);
    const draft = await storage.rules.create('acme', 'arch-2', 'DRAFT', content(), NO_LIMIT);
    let called = false;
    const result = await storage.rules.archive('acme', draft.id, (next) => {
      called = true;
      return next;
    });
    expect(called).toBe(false);
    expect(result.live).toBeUndefined();
    expect(result.rule.status).toBe('archived');
    expect((await storage.rules.liveRuleset('acme', 'arch-2'))?.rulesetVersion).toBe(1);
  });

  it('is idempotent', async () => {
    const rule = await storage.rules.create('acme', 'arch-3', 'R', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    const first = await storage.rules.archive('acme', rule.id, accept);
    const second = await storage.rules.archive('acme', rule.id, accept);
    expect(second.live).toBeUndefined();
    expect(second.rule).toEqual(first.rule);
    expect((await storage.rules.liveRuleset('acme', 'arch-3'))?.rulesetVersion).toBe(2);
  });

  it('keeps the rule live when beforeCommit throws', async () => {
    const rule = await storage.rules.create('acme', 'arch-4', 'R', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    await expect(storage.rules.archive('acme', rule.id, () => { throw new Error('no'); })).rejects.toThrow('no');
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ status: 'published' });
    expect(summarize(await storage.rules.liveRuleset('acme', 'arch-4'))).toEqual({ R: 'amount > 0' });
  });
});

describe('publishContext', () => {
  it('publishes every draft in one ruleset version and reports their ids', async () => {
    const a = await storage.rules.create('acme', 'ctx-1', 'A', content(), NO_LIMIT);
    const b = await storage.rules.create('acme', 'ctx-1', 'B', content(), NO_LIMIT);
    const archived = await storage.rules.create('acme', 'ctx-1', 'GONE', content(), NO_LIMIT);
    await storage.rules.archive('acme', archived.id, accept);
    const { result, live } = await storage.rules.publishContext('acme', 'ctx-1', accept);
    expect(result).toEqual({ context: 'ctx-1', rulesetVersion: 1, published: [a.id, b.id], changes: { added: ['A', 'B'], changed: [], removed: [] } });
    expect(summarize(live ?? null)).toEqual({ A: 'amount > 0', B: 'amount > 0' });
    expect((await storage.rules.get('acme', a.id))?.status).toBe('published');
    expect((await storage.rules.get('acme', archived.id))?.status).toBe('archived');
  });

  it('publishes only the drafts, edits of live rules included', async () => {
    const a = await storage.rules.create('acme', 'ctx-2', 'A', content(), NO_LIMIT);
    const b = await storage.rules.create('acme', 'ctx-2', 'B', content(), NO_LIMIT);
    await storage.rules.publishContext('acme', 'ctx-2', accept);
    await storage.rules.update('acme', b.id, 1, content({ expression: 'amount > 50' }));
    const { result } = await storage.rules.publishContext('acme', 'ctx-2', accept);
    expect(result).toEqual({ context: 'ctx-2', rulesetVersion: 2, published: [b.id], changes: { added: [], changed: ['B'], removed: [] } });
    expect((await storage.rules.get('acme', a.id))?.version).toBe(1);
  });

  it('with no drafts returns published [] and the version unchanged, without beforeCommit', async () => {
    const rule = await storage.rules.create('acme', 'ctx-3', 'A', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    let called = false;
    const outcome = await storage.rules.publishContext('acme', 'ctx-3', (next) => {
      called = true;
      return next;
    });
    expect(outcome).toEqual({ result: { context: 'ctx-3', rulesetVersion: 1, published: [], changes: { added: [], changed: [], removed: [] } } });
    expect(called).toBe(false);
  });

  it('is NotFound for a context without rules', async () => {
    await expect(storage.rules.publishContext('acme', 'no-such-context', accept)).rejects.toBeInstanceOf(NotFoundError);
    expect((await storage.rules.contexts('acme')).map((c) => c.context)).not.toContain('no-such-context');
  });

  it('publishes nothing when beforeCommit throws', async () => {
    const a = await storage.rules.create('acme', 'ctx-4', 'A', content(), NO_LIMIT);
    await storage.rules.create('acme', 'ctx-4', 'B', content(), NO_LIMIT);
    await storage.rules.publishRule('acme', a.id, accept);
    await storage.rules.update('acme', a.id, 1, content({ expression: 'amount > 7' }));
    await expect(storage.rules.publishContext('acme', 'ctx-4', () => { throw new Error('compile failed'); })).rejects.toThrow('compile failed');
    const live = await storage.rules.liveRuleset('acme', 'ctx-4');
    expect(live?.rulesetVersion).toBe(1);
    expect(summarize(live)).toEqual({ A: 'amount > 0' });
    const list = await storage.rules.list('acme', { context: 'ctx-4', limit: 10 });
    expect(list.items.map((r) => [r.code, r.status])).toEqual([['A', 'draft'], ['B', 'draft']]);
  });
});

describe('draftRuleset', () => {
  it('is what a context publish would make live, at the version it would get', async () => {
    expect(await storage.rules.draftRuleset('acme', 'draft-1')).toBeNull();
    const a = await storage.rules.create('acme', 'draft-1', 'A', content(), NO_LIMIT);
    expect(await storage.rules.draftRuleset('acme', 'draft-1')).toMatchObject({ rulesetVersion: 1, rules: [{ code: 'A' }] });
    await storage.rules.publishRule('acme', a.id, accept);
    expect((await storage.rules.draftRuleset('acme', 'draft-1'))?.rulesetVersion).toBe(1);
    await storage.rules.create('acme', 'draft-1', 'B', content({ expression: 'b == 1' }), NO_LIMIT);
    const draft = await storage.rules.draftRuleset('acme', 'draft-1');
    expect(draft?.rulesetVersion).toBe(2);
    expect(summarize(draft)).toEqual({ A: 'amount > 0', B: 'b == 1' });
  });
});

describe('contexts and ruleset versions', () => {
  it('summarize each context of the tenant', async () => {
    // Tenants of their own, so the contexts of other tests stay out of view.
    await storage.tenants.ensureTenant('summary');
    await storage.tenants.ensureTenant('summary-2');
    const a = await storage.rules.create('summary', 'alpha', 'A', content(), NO_LIMIT);
    await storage.rules.create('summary', 'alpha', 'B', content(), NO_LIMIT);
    const c = await storage.rules.create('summary', 'alpha', 'C', content(), NO_LIMIT);
    await storage.rules.publishRule('summary', a.id, accept);
    await storage.rules.archive('summary', c.id, accept);
    await storage.rules.create('summary', 'beta', 'X', content(), NO_LIMIT);
    await storage.rules.create('summary-2', 'gamma', 'X', content(), NO_LIMIT);
    expect(await storage.rules.contexts('summary')).toEqual([
      { context: 'alpha', rulesetVersion: 1, rules: { draft: 1, published: 1, archived: 1 } },
      { context: 'beta', rulesetVersion: null, rules: { draft: 1, published: 0, archived: 0 } },
    ]);
    expect(await storage.rules.rulesetVersions('summary')).toEqual(new Map([['alpha', 1]]));
    expect(await storage.rules.rulesetVersions('summary-2')).toEqual(new Map());
  });
});

describe('restore', () => {
  it('makes an archived rule a draft at a new version copying its content, the ruleset untouched', async () => {
    const rule = await storage.rules.create('acme', 'restore-1', 'R', content({ priority: 7, schema: { type: 'integer' } }), NO_LIMIT);
    await storage.rules.publishRule('acme', rule.id, accept);
    await storage.rules.archive('acme', rule.id, accept);
    const restored = await storage.rules.restore('acme', rule.id, NO_LIMIT);
    expect(restored).toMatchObject({ status: 'draft', version: 2, publishedVersion: null, priority: 7, schema: { type: 'integer' } });
    expect(await storage.rules.get('acme', rule.id)).toEqual(restored);
    const versions = await storage.rules.versions('acme', rule.id);
    expect(versions?.map((v) => [v.version, v.publishedAt === null])).toEqual([[2, true], [1, false]]);
    expect(versions?.[0].priority).toBe(7);
    // Archiving the live rule made ruleset version 2; restoring makes nothing live.
    expect(await storage.rules.liveRuleset('acme', 'restore-1')).toMatchObject({ rulesetVersion: 2, rules: [] });
    expect(summarize(await storage.rules.draftRuleset('acme', 'restore-1'))).toEqual({ R: 'amount > 0' });
  });

  it('refuses a rule that is not archived, a code taken again, and a full context', async () => {
    const rule = await storage.rules.create('acme', 'restore-2', 'R', content(), NO_LIMIT);
    await expect(storage.rules.restore('acme', rule.id, NO_LIMIT)).rejects.toBeInstanceOf(ConflictError);
    await storage.rules.archive('acme', rule.id, accept);
    const taker = await storage.rules.create('acme', 'restore-2', 'R', content(), NO_LIMIT);
    await expect(storage.rules.restore('acme', rule.id, NO_LIMIT)).rejects.toBeInstanceOf(ConflictError);
    await storage.rules.archive('acme', taker.id, accept);
    await storage.rules.create('acme', 'restore-2', 'OTHER', content(), NO_LIMIT);
    await expect(storage.rules.restore('acme', rule.id, 1)).rejects.toBeInstanceOf(LimitExceededError);
    expect(await storage.rules.get('acme', rule.id)).toMatchObject({ status: 'archived', version: 1 });
    await expect(storage.rules.restore('acme', rule.id, 2)).resolves.toMatchObject({ status: 'draft', version: 2 });
  });
});

describe('tenant isolation', () => {
  it("treats another tenant's rule as unknown in every operation", async () => {
    const rule = await storage.rules.create('globex', 'iso-1', 'SECRET', content(), NO_LIMIT);
    await storage.rules.publishRule('globex', rule.id, accept);
    expect(await storage.rules.get('acme', rule.id)).toBeNull();
    expect(await storage.rules.versions('acme', rule.id)).toBeNull();
    await expect(storage.rules.update('acme', rule.id, 1, content())).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.rules.publishRule('acme', rule.id, accept)).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.rules.archive('acme', rule.id, accept)).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.rules.restore('acme', rule.id, NO_LIMIT)).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.rules.publishContext('acme', 'iso-1', accept)).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.rules.rollback('acme', 'iso-1', 1, NO_LIMIT, accept)).rejects.toBeInstanceOf(NotFoundError);
    expect(await storage.rules.liveRuleset('acme', 'iso-1')).toBeNull();
    expect(await storage.rules.draftRuleset('acme', 'iso-1')).toBeNull();
    expect((await storage.rules.list('acme', { status: 'all', limit: 500 })).items.map((r) => r.id)).not.toContain(rule.id);
    expect((await storage.rules.contexts('acme')).map((c) => c.context)).not.toContain('iso-1');
    expect(await storage.rules.get('globex', rule.id)).toMatchObject({ status: 'published' });
  });

  it.each(['not-a-uuid', '', "' or 1=1 --", '00000000-0000-0000-0000-000000000000'])('reads the id %j as unknown', async (id) => {
    expect(await storage.rules.get('acme', id)).toBeNull();
    expect(await storage.rules.versions('acme', id)).toBeNull();
    await expect(storage.rules.archive('acme', id, accept)).rejects.toBeInstanceOf(NotFoundError);
    await expect(storage.apiKeys.revoke('acme', id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
