/**
 * What every peer engine adapter provides, and the one loop that applies
 * our rule semantics (forEach, `when`, skip-if-missing, required) around
 * expressions written in the peer's own language. The loop is plain
 * JavaScript shared by the sync peers; every condition inside it is
 * evaluated by the peer engine.
 */

/** A peer engine's run: the keys of the failed rules, `CODE` or `CODE[i]` for a forEach element. */
export type PeerRun = (payload: unknown) => string[] | Promise<string[]>;

/** A rules engine measured against the compiled validator on the same rules. */
export interface PeerEngine {
  readonly name: string;
  readonly async: boolean;
  /** Codes of rules the engine's language cannot express; left out of its run. */
  readonly omitted: readonly string[];
  /** What was approximated or needed a JavaScript extension, in a sentence each. */
  readonly notes: readonly string[];
  readonly run: PeerRun;
}

/**
 * One rule translated into a peer's language. `E` is the engine's prepared
 * expression. Data is the payload, or `{ item, index }` inside a forEach.
 */
export interface PeerRule<E> {
  readonly code: string;
  /** Top-level key of the array the rule runs over. */
  readonly forEach?: string;
  readonly when?: E;
  /** Whether the value at the rule's fieldPath is there (not undefined or null). */
  readonly present?: E;
  readonly required?: boolean;
  /** Absent for a required-only rule. */
  readonly test?: E;
}

/** Evaluates a prepared expression; a throw counts as false, as CEL users treat errors. */
export type PeerEvaluate<E> = (expression: E, data: unknown) => unknown;

function holds<E>(evaluate: PeerEvaluate<E>, expression: E, data: unknown): boolean {
  try {
    return evaluate(expression, data) === true;
  } catch {
    return false;
  }
}

function failsOn<E>(rule: PeerRule<E>, evaluate: PeerEvaluate<E>, data: unknown): boolean {
  if (rule.when !== undefined && !holds(evaluate, rule.when, data)) return false;
  if (rule.present !== undefined && !holds(evaluate, rule.present, data)) return rule.required === true;
  return rule.test !== undefined && !holds(evaluate, rule.test, data);
}

/**
 * Runs translated rules in order and returns the keys of the failures.
 * Top-level rules see `root` (the payload unless the engine wraps it).
 */
export function runPeerRules<E>(
  rules: readonly PeerRule<E>[], evaluate: PeerEvaluate<E>, payload: unknown, root: unknown = payload,
): string[] {
  const failed: string[] = [];
  for (const rule of rules) {
    if (rule.forEach === undefined) {
      if (failsOn(rule, evaluate, root)) failed.push(rule.code);
      continue;
    }
    const list = (payload as Record<string, unknown>)[rule.forEach];
    if (!Array.isArray(list)) continue;
    for (let index = 0; index < list.length; index++) {
      if (failsOn(rule, evaluate, { item: list[index], index })) failed.push(`${rule.code}[${index}]`);
    }
  }
  return failed;
}
