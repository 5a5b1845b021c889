/**
 * The layers of `src/` as docs/architecture.md orders them ("Inside
 * `src/`", bottom up), held against the code's actual imports: a module
 * imports only from its own layer or those below, except for the
 * exceptions that table names. The order is read from the document, so
 * changing it (or adding a folder) without the code agreeing fails here,
 * and so does an import that runs back up.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** The documented imports that point up, each named in the table's text. */
const EXCEPTIONS: readonly { from: RegExp; to: string; typeOnly: boolean; named: string }[] = [
  { from: /^storage\//, to: 'sync/change-notice.ts', typeOnly: false, named: '`sync/change-notice.ts`' },
  { from: /^rules\/rule-body\.ts$/, to: 'routes/schemas/rule-schemas.ts', typeOnly: true, named: '`routes/schemas/rule-schemas.ts`' },
];

/** The table's rows, bottom first: the files and folders (`storage/`) each names in its first cell. */
function documentedLayers(): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('**Inside `src/`**');
  const section = doc.slice(start, doc.indexOf('\n## ', start));
  return section.split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => [...line.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
}

const LAYERS = documentedLayers();

/** The row of a file (relative to src/): the longest folder that holds it, or its own name. */
function layerOf(file: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  LAYERS.forEach((names, layer) => {
    for (const name of names) {
      const holds = name.endsWith('/') ? file.startsWith(name) : file === name;
      if (holds && (best === undefined || name.length > best.length)) best = { layer, length: name.length };
    }
  });
  return best?.layer;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The relative imports and re-exports of `src/`, static and dynamic, that land inside `src/`. */
function srcImports(): Import[] {
  const imports: Import[] = [];
  for (const path of sourceFiles(SRC)) {
    const text = readFileSync(path, 'utf8');
    const from = relative(SRC, path);
    const found = [
      ...[...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+'(\.[^']+)'/gm)].map((m) => ({ spec: m[2], typeOnly: m[1] !== undefined })),
      ...[...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => ({ spec: m[1], typeOnly: false })),
    ];
    for (const { spec, typeOnly } of found) {
      const target = normalize(join(dirname(path), spec));
      if (target.startsWith(SRC + '/')) imports.push({ from, to: relative(SRC, target), typeOnly });
    }
  }
  return imports;
}

describe('the layers of src/ (docs/architecture.md)', () => {
  const imports = srcImports();

  it('the table places every module of src/', () => {
    expect(LAYERS.length).toBeGreaterThan(20);
    const unplaced = sourceFiles(SRC).map((path) => relative(SRC, path)).filter((file) => layerOf(file) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('no import runs back up the order, but the exceptions the table names', () => {
    expect(imports.length).toBeGreaterThan(500);
    const upward = imports
      .filter(({ from, to }) => layerOf(to)! > layerOf(from)!)
      .filter(({ from, to, typeOnly }) => !EXCEPTIONS.some((e) => e.from.test(from) && e.to === to && (typeOnly || !e.typeOnly)))
      .map(({ from, to }) => `${from} -> ${to} (${LAYERS[layerOf(from)!][0]} imports ${LAYERS[layerOf(to)!][0]})`);
    expect(upward).toEqual([]);
  });

  it('each exception is named in the table and still exists', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    for (const exception of EXCEPTIONS) {
      expect(doc).toContain(exception.named);
      expect(imports.some(({ from, to }) => exception.from.test(from) && to === exception.to)).toBe(true);
    }
  });
});
