/**
 * V8's code cache for generated validators, made where they compile and
 * used where they are installed.
 *
 * A thread of the compile lane evaluates each part of a validator's
 * generated code and calls it once, so V8 has compiled it to bytecode
 * there. Without a cache the main thread, installing the same code, parses
 * and compiles it all again: most of a 5,000-rule install's cost on the
 * event loop that answers validations. With the lane's code cache
 * (`vm.Script#createCachedData`, made after that first call, so it holds
 * the compiled functions too) the main thread deserializes the bytecode
 * instead, about ten times faster.
 *
 * A cache must go only with the very source string it was made from: V8
 * checks a cache against its own version, its flags and the source's
 * *length*, not its text, so a cache handed to another source of the same
 * length would run that other code. Here the pairing holds by construction:
 * keyed by the exact string on the lane, then by position in the same build
 * (`sources[i]` with `caches[i]`), looked up by the exact string again. A
 * cache V8 rejects (`cachedDataRejected`: another Node version, other
 * flags, damaged bytes) only means the source is compiled as without one.
 */
import { Script } from 'node:vm';
import type { SourceEvaluator } from '../../compiler/types.ts';

/** The name generated code carries in stack traces and profiles. */
const FILENAME = 'rules-validator';

/** Evaluates a generated factory expression as a script of its own; `cachedData` when there is one. */
function evaluateScript(source: string, cachedData?: Uint8Array): { script: Script; value: unknown } {
  const script = new Script(source, { filename: FILENAME, ...(cachedData === undefined ? {} : { cachedData }) });
  return { script, value: script.runInThisContext() };
}

/**
 * An evaluator that keeps the script of every source it evaluates, and
 * the code caches of those sources read afterwards, once they have run.
 *
 * @example
 * const recorder = codeCacheRecorder();
 * const compiled = compileRuleset(rules, { evaluate: recorder.evaluate });
 * const caches = recorder.cachesOf(compiled.generated().layout);
 */
export function codeCacheRecorder(): { evaluate: SourceEvaluator; cachesOf: (sources: readonly string[]) => (Uint8Array | null)[] } {
  const scripts = new Map<string, Script>();
  return {
    evaluate(source) {
      const { script, value } = evaluateScript(source);
      scripts.set(source, script);
      return value;
    },
    cachesOf(sources) {
      const caches = sources.map((source) => scripts.get(source)?.createCachedData() ?? null);
      scripts.clear();
      return caches;
    },
  };
}

/** How an install's sources used their code cache: evaluated from one V8 took, and with one it rejected. */
export interface CodeCacheUse {
  used: number;
  rejected: number;
}

/**
 * An evaluator for the sources a build lists, in that order, each with
 * its cache when the build brought one (`caches[i]` for `sources[i]`); any
 * other source is evaluated without. `use` counts as it goes.
 */
export function cachedEvaluator(
  sources: readonly string[], caches: readonly (Uint8Array | null)[] | undefined,
): { evaluate: SourceEvaluator; use: CodeCacheUse } {
  const use: CodeCacheUse = { used: 0, rejected: 0 };
  const bySource = new Map<string, Uint8Array>();
  sources.forEach((source, i) => {
    const cache = caches?.[i];
    if (cache !== null && cache !== undefined) bySource.set(source, cache);
  });
  const evaluate: SourceEvaluator = (source) => {
    const cache = bySource.get(source);
    // Used once: the cache's bytes are garbage as soon as the script is made.
    bySource.delete(source);
    const { script, value } = evaluateScript(source, cache);
    if (cache !== undefined) {
      if (script.cachedDataRejected === true) use.rejected++;
      else use.used++;
    }
    return value;
  };
  return { evaluate, use };
}
