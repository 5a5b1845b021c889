import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError, type Rule, type Storage } from '../../src/storage/types.ts';
import { accept, content, NO_LIMIT, openTestStorage } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;
const byCode = new Map<string, Rule>();

// One context per state: D draft, P published, E edited after publish
// (draft), A archived; tags on some; another context and tenant as noise.
beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
  const make = async (context: string, code: string, tags: string[] = []) => {
    const rule = await storage.rules.create('acme', context, code, content({ tags }), NO_LIMIT);
    byCode.set(code, rule);
    return rule;
  };
  await make('list', 'D', ['kyc']);
  const p = await make('list', 'P', ['kyc', 'money']);
  const e = await make('list', 'E', ['money']);
  const a = await make('list', 'A');
  await make('other', 'O', ['kyc']);
  await storage.rules.publishRule('acme', p.id, accept);
  await storage.rules.publishRule('acme', e.id, accept);
  await storage.rules.update('acme', e.id, 1, content({ tags: ['money'], expression: 'amount > 2' }));
  await storage.rules.archive('acme', a.id, accept);
  await storage.rules.create('globex', 'list', 'G', content({ tags: ['kyc'] }), NO_LIMIT);
});
afterAll(async () => {
  await close();
});

async function codes(query: Parameters<Storage['rules']['list']>[1]): Promise<string[]> {
  const page = await storage.rules.list('acme', query);
  return page.items.map((r) => r.code);
}

describe('list filters', () => {
  it.each([
    [{ context: 'list' }, ['D', 'P', 'E']],
    [{ context: 'list', status: 'all' as const }, ['D', 'P', 'E', 'A']],
    [{ context: 'list', status: 'draft' as const }, ['D', 'E']],
    [{ context: 'list', status: 'published' as const }, ['P']],
    [{ context: 'list', status: 'archived' as const }, ['A']],
    [{ tag: 'kyc' }, ['D', 'P', 'O']],
    [{ context: 'list', tag: 'money', status: 'draft' as const }, ['E']],
    [{ tag: 'nope' }, []],
    [{ context: 'nowhere' }, []],
    [{}, ['D', 'P', 'E', 'O']],
  ])('%j gives %j in creation order', async (filter, expected) => {
    expect(await codes({ limit: 50, ...filter })).toEqual(expected);
  });

  it('returns full rules with their status', async () => {
    const page = await storage.rules.list('acme', { context: 'list', status: 'all', limit: 50 });
    expect(page.items.map((r) => [r.code, r.status, r.version, r.publishedVersion])).toEqual([
      ['D', 'draft', 1, null],
      ['P', 'published', 1, 1],
      ['E', 'draft', 2, 1],
      ['A', 'archived', 1, null],
    ]);
    expect(page.items[0]).toEqual(await storage.rules.get('acme', byCode.get('D')!.id));
    expect(page.nextCursor).toBeNull();
  });

  it('treats a tag filter value as data', async () => {
    expect(await codes({ tag: 'kyc"]\'); drop table rules; --', limit: 50 })).toEqual([]);
    expect(await codes({ limit: 50 })).toHaveLength(4);
  });
});

describe('cursor pagination', () => {
  // A tenant of its own keeps these rules out of the filter tests' view.
  beforeAll(async () => {
    await storage.tenants.ensureTenant('pager');
  });

  it('walks every rule once, in order, with a null cursor on the last page', async () => {
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await storage.rules.create('pager', 'pages', `R${i}`, content(), NO_LIMIT)).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await storage.rules.list('pager', { context: 'pages', limit: 3, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen).toEqual(created);

    // Exactly a page's worth: no empty trailing page.
    const exact = await storage.rules.list('pager', { context: 'pages', limit: 7 });
    expect(exact.items).toHaveLength(7);
    expect(exact.nextCursor).toBeNull();
  });

  it('is stable under inserts: no row repeats or goes missing', async () => {
    const before: string[] = [];
    for (let i = 0; i < 5; i++) before.push((await storage.rules.create('pager', 'grow', `B${i}`, content(), NO_LIMIT)).id);
    const first = await storage.rules.list('pager', { context: 'grow', limit: 2 });
    const inserted: string[] = [];
    for (let i = 0; i < 3; i++) inserted.push((await storage.rules.create('pager', 'grow', `N${i}`, content(), NO_LIMIT)).id);
    const seen = first.items.map((r) => r.id);
    let cursor = first.nextCursor ?? undefined;
    while (cursor !== undefined) {
      const page = await storage.rules.list('pager', { context: 'grow', limit: 2, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 5)).toEqual(before);
    expect(seen.slice(5)).toEqual(inserted);
  });

  it.each(['garbage', '', Buffer.from('["x","y"]').toString('base64url'), Buffer.from('{}').toString('base64url')])(
    'refuses the cursor %j as invalid input',
    async (cursor) => {
      const attempt = storage.rules.list('acme', { limit: 10, cursor });
      await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
      await expect(attempt).rejects.toMatchObject({ path: 'cursor' });
    },
  );
});
