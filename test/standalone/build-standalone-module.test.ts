/**
 * The standalone module builder and its cache, without HTTP: what goes into
 * the bundle (the DFA matcher and re2js only when a pattern runs on them;
 * DFA tables as numbers only), refusals, the header,
 * and the cache's single flight, bound and retry after a failed build.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRuleset, MAX_FAILURES_PER_VALIDATION, type RuleDefinition } from '../../compiler/index.ts';
import { compilePattern } from '../../compiler/regex/index.ts';
import { buildStandaloneModule, StandaloneBuildError, StandaloneModuleCache } from '../../compiler/standalone/index.ts';

let dir: string;
let files = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rules-standalone-unit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(code: string): Promise<(payload: unknown) => unknown> {
  const file = join(dir, `m${files++}.mjs`);
  await writeFile(file, code);
  return ((await import(pathToFileURL(file).href)) as { validate: (payload: unknown) => unknown }).validate;
}

describe('buildStandaloneModule', () => {
  it('builds an empty ruleset into a module that passes everything', async () => {
    const built = await buildStandaloneModule([]);
    expect(built.ruleCount).toBe(0);
    expect((await load(built.code))({ any: 1 })).toEqual({ isValid: true, totalRulesEvaluated: 0, failures: [] });
  });

  it('reads now() from validate\'s options when given, else from the clock', async () => {
    const built = await buildStandaloneModule([{ code: 'BEFORE_2001', name: 'Before 2001', expression: 'now() < 978307200000' }]);
    const validate = (await import(`data:text/javascript;base64,${Buffer.from(built.code).toString('base64')}`)) as {
      validate: (payload: unknown, options?: { now?: number | Date }) => { isValid: boolean };
    };
    expect(validate.validate({}).isValid).toBe(false);
    expect(validate.validate({}, { now: Date.UTC(2000, 0, 1) }).isValid).toBe(true);
    expect(validate.validate({}, { now: new Date(Date.UTC(2000, 0, 1)) }).isValid).toBe(true);
    expect(validate.validate({}, { now: Date.UTC(2002, 0, 1) }).isValid).toBe(false);
  });

  it.each([
    ['no pattern', 'amount > 0', false, false],
    ['a pattern proven linear (native RegExp)', 'matches(code, "^[A-Z]{3}$")', false, false],
    ['a pattern not proven linear (the DFA)', 'matches(code, "^(a|a)*b$")', true, false],
    ['a pattern past the DFA\'s bounds (re2js)', 'matches(code, "(a|b)*a(a|b){12}")', false, true],
  ])('with %s, bundles the DFA matcher: %s, re2js: %s', async (_label, expression, dfa, re2) => {
    const rules: RuleDefinition[] = [{ code: 'R', name: 'R', expression }];
    const built = await buildStandaloneModule(rules);
    expect(built.code.includes('function dfaMatcher(')).toBe(dfa);
    expect(built.code.includes('RE2JS')).toBe(re2);
    const validate = await load(built.code);
    const compiled = compileRuleset(rules);
    const codes = ['ABC', 'aab', 'ab', `b${'a'.repeat(13)}`, 'a'.repeat(13), '\u{1F600}aab', 'aab\ud800', '\udc00b'];
    for (const payload of [{}, { amount: 1, code: 'ABC' }, { code: 7 }, ...codes.map((code) => ({ code }))]) {
      expect(JSON.stringify(validate(payload))).toBe(JSON.stringify(compiled.validate(payload, Date.now())));
    }
  });

  it('writes a DFA into the module as numbers only, whatever the pattern\'s text, and answers as the service does', async () => {
    // Quotes, a backslash, a comment end, a script end and a line separator, on the DFA (\\b is never proven linear).
    const pattern = '\\b(?:a|a)*"\'\\\\\\*\\/<\\/script>\\u2028\\u{1F600}';
    expect(compilePattern(pattern)).toMatchObject({ ok: true, runner: { kind: 'dfa' } });
    const rules: RuleDefinition[] = [
      { code: 'R', name: 'R', fieldPath: 'code', expression: `matches($value, ${JSON.stringify(pattern)})` },
      { code: 'S', name: 'S', fieldPath: 'code', schema: { type: 'string', pattern } },
    ];
    const built = await buildStandaloneModule(rules);
    const calls = [...built.code.matchAll(/dfaMatcher\((\{[^}]*\})/g)].map((match) => match[1]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(
      /^\{ columns: \d+, start: -?\d+, directClasses: \[[\d, ]+\], rangeStarts: \[[\d, ]+\], rangeClasses: \[[\d, ]+\], transitions: \[[-\d, ]+\] \}$/,
    );
    const validate = await load(built.code);
    const compiled = compileRuleset(rules);
    const matching = ' aa"\'\\*/</script>\u2028\u{1F600}';
    expect(new RegExp(pattern, 'u').test(matching)).toBe(true);
    for (const code of [matching, matching.slice(1), `x${matching.slice(1)}`, matching.slice(0, -1), '']) {
      expect(JSON.stringify(validate({ code }))).toBe(JSON.stringify(compiled.validate({ code }, 0)));
    }
    expect((validate({ code: matching }) as { isValid: boolean }).isValid).toBe(true);
  });

  it('stops a validation past MAX_FAILURES_PER_VALIDATION with a RangeError, as the service stops it', async () => {
    const validate = await load((await buildStandaloneModule([{ code: 'R', name: 'R', forEach: 'items', expression: '$item > 0' }])).code);
    const items = (count: number) => ({ items: new Array<number>(count).fill(0) });
    expect((validate(items(MAX_FAILURES_PER_VALIDATION)) as { failures: unknown[] }).failures).toHaveLength(MAX_FAILURES_PER_VALIDATION);
    const tooMany = () => validate(items(MAX_FAILURES_PER_VALIDATION + 1));
    expect(tooMany).toThrow(RangeError);
    expect(tooMany).toThrow(`the payload fails rules more than ${MAX_FAILURES_PER_VALIDATION} times`);
  });

  it('builds a ruleset of several generated parts (patterns and schemas in each) that answers as the service does', async () => {
    const rules: RuleDefinition[] = Array.from({ length: 300 }, (_, i) => (i % 3 === 0
      ? { code: `P${i}`, name: `Pattern ${i}`, fieldPath: 'code', expression: `matches($value, "^(a|a)*b${i}$")` }
      : i % 3 === 1
        ? { code: `S${i}`, name: `Schema ${i}`, fieldPath: 'n', schema: { type: 'integer', not: { const: i } } }
        : { code: `E${i}`, name: `Expression ${i}`, fieldPath: 'n', expression: `$value != ${i} && now() > 0`, message: '{{ $value }} is out' }));
    const steps: string[] = [];
    const built = await buildStandaloneModule(rules, {
      runSteps: (s) => {
        steps.push('run');
        for (;;) {
          const step = s.next();
          if (step.done) return Promise.resolve(step.value);
        }
      },
    });
    // Planning and generation both went through the caller's runner.
    expect(steps).toEqual(['run', 'run']);
    expect(built.ruleCount).toBe(300);
    const validate = await load(built.code);
    const compiled = compileRuleset(rules);
    expect(compiled.source.match(/return function rules\d+\(/g)).toHaveLength(3);
    for (const payload of [{}, { code: 'aab0', n: 1 }, { code: 'b150', n: 200 }, { code: 'x', n: 'y' }, { n: 299 }]) {
      expect(JSON.stringify(validate(payload))).toBe(JSON.stringify(compiled.validate(payload, Date.now())));
    }
  });

  it('builds a recursive schema written with "$ref": "#", answering as the service does', async () => {
    const tree = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } };
    const rules: RuleDefinition[] = [{ code: 'TREE', name: 'Tree', fieldPath: 'root', schema: tree }];
    const validate = await load((await buildStandaloneModule(rules)).code);
    const compiled = compileRuleset(rules);
    expect(compiled.errors).toEqual([]);
    const payload = { root: { name: 'a', children: [{ name: 'b', children: [{ children: [] }] }] } };
    const answer = compiled.validate(payload, 0);
    expect(answer.failures.map((failure) => failure.fieldPath)).toEqual(['root.children[0].children[0].name']);
    expect(JSON.stringify(validate(payload))).toBe(JSON.stringify(answer));
  });

  it('bundles a decision table (its index and expression cells) that answers as the service does', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({
      when: [`"P${i % 12}"`, i % 5 === 0 ? '$cell % 2 == 0' : `in ["C${i % 3}", "C${(i + 1) % 3}"]`, `[${i * 10}..${i * 10 + 10})`],
      then: [i * 100],
    }));
    const rules: RuleDefinition[] = [{
      code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: '$value <= $row.max', message: '{{ $value }} over {{ $row.max }} (row {{ $rowIndex }})',
      table: {
        hitPolicy: 'first', outputs: ['max'], rows, noMatch: 'fail',
        inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'country' }, { name: 'score', expression: 'score' }],
      },
    }];
    const built = await buildStandaloneModule(rules);
    expect(built.code).toContain('TableIndex');
    const validate = await load(built.code);
    const compiled = compileRuleset(rules);
    for (let i = 0; i < 300; i += 7) {
      for (const country of ['C0', 'C1', 'C2', 4, undefined]) {
        const payload = { amount: (i % 4) * 1000, product: `P${i % 12}`, country, score: i * 10 + 3 };
        const answer = validate(payload) as { failures: unknown[] };
        expect(JSON.stringify(answer)).toBe(JSON.stringify(compiled.validate(payload, Date.now())));
      }
    }
  });

  it('refuses a ruleset with a rule that does not compile, naming it', async () => {
    const attempt = buildStandaloneModule([
      { code: 'GOOD', name: 'Good', expression: 'a > 1' },
      { code: 'BAD', name: 'Bad', expression: 'process.exit(1)' },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(StandaloneBuildError);
    await expect(attempt).rejects.toMatchObject({ code: 'STANDALONE_BUILD_FAILED', errors: [expect.objectContaining({ ruleCode: 'BAD' })] });
  });

  it('applies the limits it is given, as the service does', async () => {
    const rules: RuleDefinition[] = [{ code: 'LONG', name: 'Long', expression: 'a > 1 && b > 2 && c > 3' }];
    await expect(buildStandaloneModule(rules, { limits: { maxExpressionLength: 16 } })).rejects.toBeInstanceOf(StandaloneBuildError);
    expect((await buildStandaloneModule(rules)).ruleCount).toBe(1);
  });

  it('names only well-formed tenant and context names in the header', async () => {
    const named = await buildStandaloneModule([], { about: { tenantId: 'acme', context: 'loan-application', rulesetVersion: 7 } });
    expect(named.code.split('\n')[0]).toBe(
      '// Standalone validator (tenant acme, context loan-application, ruleset version 7), generated by the rules service.',
    );
    const odd = await buildStandaloneModule([], { about: { tenantId: 'acme', context: 'x\n*/ alert(1)' } });
    expect(odd.code.split('\n')[0]).toBe('// Standalone validator (tenant acme), generated by the rules service.');
  });

  it('minifies on request, with the same answers', async () => {
    const rules: RuleDefinition[] = [{ code: 'R', name: 'R', fieldPath: 'n', expression: '$value < 10', message: 'n={{ $value }}' }];
    const plain = await buildStandaloneModule(rules);
    const small = await buildStandaloneModule(rules, { minify: true });
    expect(small.code.length).toBeLessThan(plain.code.length);
    expect((await load(small.code))({ n: 12 })).toEqual((await load(plain.code))({ n: 12 }));
  });
});

describe('StandaloneModuleCache', () => {
  it('shares one build between concurrent requests and keeps the result', async () => {
    const cache = new StandaloneModuleCache(2);
    let builds = 0;
    const build = async (): Promise<string> => {
      builds++;
      await new Promise((done) => setTimeout(done, 10));
      return 'code';
    };
    expect(await Promise.all([cache.get('k', build), cache.get('k', build), cache.get('k', build)])).toEqual(['code', 'code', 'code']);
    expect(await cache.get('k', build)).toBe('code');
    expect(builds).toBe(1);
  });

  it('keeps at most maxEntries modules, dropping the least recently used', async () => {
    const cache = new StandaloneModuleCache(2);
    const built: string[] = [];
    const build = (key: string) => (): Promise<string> => {
      built.push(key);
      return Promise.resolve(`code of ${key}`);
    };
    await cache.get('a', build('a'));
    await cache.get('b', build('b'));
    await cache.get('a', build('a'));
    await cache.get('c', build('c'));
    expect(cache.size).toBe(2);
    await cache.get('a', build('a'));
    await cache.get('b', build('b'));
    expect(built).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not remember a failed build, even one that throws at once', async () => {
    const cache = new StandaloneModuleCache();
    await expect(cache.get('k', () => {
      throw new Error('boom');
    })).rejects.toThrow('boom');
    await expect(cache.get('k', () => Promise.reject(new Error('again')))).rejects.toThrow('again');
    expect(await cache.get('k', () => Promise.resolve('fine'))).toBe('fine');
    expect(cache.size).toBe(1);
  });
});
