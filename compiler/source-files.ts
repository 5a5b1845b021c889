/**
 * Where the compiler's own source files are on disk. Standalone modules
 * are bundled from some of them (`compiler/runtime.ts`, the schema-failure
 * mapper, the RE2 matcher), so their paths are needed at run time.
 *
 * Why a search and not `new URL('./runtime.ts', import.meta.url)`: the
 * service runs from a bundle (`dist/server.js`, see src/build), where every
 * module shares the bundle's `import.meta.url`. Walking up from this
 * module's URL finds the checkout both from the sources (`compiler/`) and
 * from the bundle (`dist/`, or any folder inside the checkout). The search
 * runs once, on first use: compiling a rule never needs it.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The file that marks the checkout's root: `<root>/compiler/runtime.ts`. */
const MARKER = join('compiler', 'runtime.ts');

let root: string | undefined;

/**
 * The checkout's root (the folder holding `compiler/` and `node_modules/`).
 *
 * @example
 * sourceRoot(); // '/srv/rules-service'
 */
export function sourceRoot(): string {
  if (root !== undefined) return root;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, MARKER))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`the compiler's sources (${MARKER}) are not in ${start} or any folder above it`);
  }
}

/**
 * The absolute path of a file under `compiler/`.
 *
 * @example
 * compilerSourceFile('schema/schema-failures.ts'); // '/srv/rules-service/compiler/schema/schema-failures.ts'
 */
export function compilerSourceFile(relativePath: string): string {
  return join(sourceRoot(), 'compiler', relativePath);
}
