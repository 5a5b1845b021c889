/**
 * The console's sources keep tenant text out of markup and code: no
 * dangerouslySetInnerHTML, innerHTML, outerHTML, insertAdjacentHTML,
 * document.write, eval or new Function anywhere in console/src, and no
 * address of another origin. (The browser tests show hostile text staying
 * text; this keeps the ways around that out of the code.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'src');

const FORBIDDEN = [
  /dangerouslySetInnerHTML/, /\.innerHTML\b/, /\.outerHTML\b/, /insertAdjacentHTML/, /document\.write/, /\beval\s*\(/, /\bnew\s+Function\b/,
  /\bhttps?:\/\//, /localStorage/, /document\.cookie/,
];

describe('the console\'s sources', () => {
  const files = readdirSync(SOURCE_DIR, { recursive: true, encoding: 'utf8' }).filter((file) => /\.(tsx?|css)$/.test(file));

  it('are there to check', () => {
    expect(files).toEqual(expect.arrayContaining(['main.tsx', 'api.ts', path.join('pages', 'rule-editor.tsx')]));
  });

  it.each(files)('%s never writes markup from strings, evaluates code, keeps the key outside sessionStorage or calls another origin', (file) => {
    const text = readFileSync(path.join(SOURCE_DIR, file), 'utf8');
    for (const pattern of FORBIDDEN) expect(text, `${file}: ${pattern.source}`).not.toMatch(pattern);
  });
});
