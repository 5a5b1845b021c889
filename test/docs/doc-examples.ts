/**
 * The checked examples of a Markdown document, read from its fenced code
 * blocks. The info string after the opening fence says what a block holds
 * (renderers show only its first word, `json`):
 *
 * - ```` ```json ```` a rule, as the body of POST /api/v1/rules: it must save;
 * - ```` ```json analyzed ```` a rule that must save, followed by the
 *   ```` ```text ```` block of its warnings (decision tables: those the
 *   compiler's tests check, test/compiler/table-analysis.test.ts);
 * - ```` ```json schema ```` the payload schema of the examples after it (the
 *   same tests use it); only read as JSON here;
 * - ```` ```json refused ```` a rule that must be refused, followed at once by
 *   a ```` ```text ```` block of the errors it gets, one `path: message` a line;
 * - ```` ```json payload ```` a payload, followed at once by a
 *   ```` ```json result ```` block: the answer of a single validation (less
 *   `executionTimeMs`) when the rules of the same section written before the
 *   payload are the context's published rules. A section starts at any heading;
 * - ```` ```js values ```` lines of `expression  // value`: the value of the
 *   expression evaluated on the payload `{}`, as JSON, or `undefined`, or
 *   `invalid number`. Blank lines and lines that start with `//` are comments.
 *
 * A `json` block with any other tag, a refused rule without its errors or a
 * payload without its result is a mistake in the document, reported with
 * its line, so that an example cannot silently go unchecked.
 */

/** One fenced block: its info string, its text, the line of its opening fence (1-based) and the heading above it. */
export interface FencedBlock {
  info: string;
  body: string;
  line: number;
  section: string;
}

export interface RuleExample {
  line: number;
  rule: Record<string, unknown>;
}

export interface RefusedExample {
  line: number;
  rule: Record<string, unknown>;
  /** `path: message`, one per error, in the order the service gives them. */
  errors: string[];
}

export interface EvaluatedExample {
  line: number;
  section: string;
  rules: Record<string, unknown>[];
  payload: unknown;
  result: unknown;
}

/** What an expression of a `values` block evaluates to. */
export type ShownValue = { json: unknown } | 'undefined' | 'invalid number';

export interface ValueExample {
  line: number;
  expression: string;
  value: ShownValue;
}

export interface DocExamples {
  rules: RuleExample[];
  refused: RefusedExample[];
  evaluated: EvaluatedExample[];
  values: ValueExample[];
}

const FENCE = /^```(.*)$/;
const HEADING = /^#{1,6}\s+(.*)$/;

/**
 * The fenced blocks of `markdown`, in order. Fences start at the beginning
 * of a line; headings inside a block are text.
 *
 * @example
 * fencedBlocks('# A\n```json\n{}\n```\n'); // [{ info: 'json', body: '{}', line: 2, section: 'A' }]
 */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = HEADING.exec(lines[i]);
    if (heading !== null) {
      section = heading[1];
      continue;
    }
    const open = FENCE.exec(lines[i]);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`line ${start + 1}: the code block is never closed`);
    blocks.push({ info: open[1].trim(), body: body.join('\n'), line: start + 1, section });
  }
  return blocks;
}

/**
 * The rules, refused rules and evaluated examples of `markdown`.
 *
 * @example
 * docExamples(readFileSync('docs/rule-language.md', 'utf8')).refused[0].errors;
 * // ['expression: line 1, column 1: assignment is not allowed']
 */
export function docExamples(markdown: string): DocExamples {
  const blocks = fencedBlocks(markdown);
  const examples: DocExamples = { rules: [], refused: [], evaluated: [], values: [] };
  const sectionRules: Record<string, unknown>[] = [];
  let section: string | undefined;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (block.section !== section) {
      section = block.section;
      sectionRules.length = 0;
    }
    const [language, tag] = block.info.split(/\s+/);
    if (language === 'js' && tag === 'values') {
      examples.values.push(...valueLines(block));
      continue;
    }
    if (language !== 'json') continue;
    const value = parseJson(block);
    if (tag === 'schema') continue;
    if (tag === undefined || tag === 'analyzed') {
      const rule = asObject(value, block);
      examples.rules.push({ line: block.line, rule });
      sectionRules.push(rule);
    } else if (tag === 'refused') {
      const errors = follower(blocks, i, 'text');
      examples.refused.push({ line: block.line, rule: asObject(value, block), errors: errors.body.split('\n') });
      i++;
    } else if (tag === 'payload') {
      const result = follower(blocks, i, 'json result');
      if (sectionRules.length === 0) throw new Error(`line ${block.line}: a payload needs rules above it in its section`);
      examples.evaluated.push({
        line: block.line,
        section: block.section,
        rules: [...sectionRules],
        payload: value,
        result: parseJson(result),
      });
      i++;
    } else {
      throw new Error(`line ${block.line}: unknown tag "${tag}" (a json block is a rule, "analyzed", "schema", "refused", "payload" or "result" after a payload)`);
    }
  }
  return examples;
}

/** The `expression  // value` lines of a `values` block. */
function valueLines(block: FencedBlock): ValueExample[] {
  const values: ValueExample[] = [];
  block.body.split('\n').forEach((text, i) => {
    const line = block.line + 1 + i;
    if (text.trim() === '' || text.trim().startsWith('//')) return;
    const at = text.lastIndexOf(' // ');
    if (at < 0) throw new Error(`line ${line}: a values line is \`expression  // value\``);
    const expression = text.slice(0, at).trim();
    const shown = text.slice(at + 4).trim();
    let value: ShownValue;
    if (shown === 'undefined' || shown === 'invalid number') value = shown;
    else {
      try {
        value = { json: JSON.parse(shown) as unknown };
      } catch {
        throw new Error(`line ${line}: the value "${shown}" is not JSON, \`undefined\` or \`invalid number\``);
      }
    }
    values.push({ line, expression, value });
  });
  return values;
}

/** The block right after `blocks[i]`, which must have the info string `info`. */
function follower(blocks: readonly FencedBlock[], i: number, info: string): FencedBlock {
  const next = blocks[i + 1];
  if (next === undefined || next.info !== info) {
    throw new Error(`line ${blocks[i].line}: a "${blocks[i].info}" block must be followed at once by a "${info}" block`);
  }
  return next;
}

function parseJson(block: FencedBlock): unknown {
  try {
    return JSON.parse(block.body);
  } catch (error) {
    throw new Error(`line ${block.line}: the block is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

function asObject(value: unknown, block: FencedBlock): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`line ${block.line}: a rule block must hold one JSON object`);
  }
  return value as Record<string, unknown>;
}
