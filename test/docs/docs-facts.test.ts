/**
 * The user documentation against the code it describes: every setting the
 * configuration reads, every error code and every metric is documented
 * where a user looks for it; the README stays a short guide; relative links
 * lead to files (and headings) that exist; and the documentation never
 * sends readers to planning documents that are not part of the repository.
 *
 * Facts come from the code itself (the configuration module, the error
 * registry, the metric registries), never from lists kept in this file, so
 * adding a variable, a code or a metric without documenting it fails here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ERRORS } from '../../src/errors.ts';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

const README_MAX_LINES = 260;

/** Documents a link may name before they exist (none today: every linked document is written). */
const DOCUMENTS_IN_PROGRESS = new Set<string>();

/** Names of the planning documents, which readers of the repository never have. */
// Patterns, not strings, so that this file does not itself name them.
const PLANNING_REFERENCES = [/\.\.\/shared\b/, /\bproduct\.md\b/, /\bservice-interface\.md\b/, /\bauthoring\.md\b/];

/** Every tracked file but the lockfile. */
function inPlanningReferenceScope(path: string): boolean {
  return path !== 'package-lock.json';
}

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The markdown without fenced code blocks (their brackets and `#` lines are not links or headings). */
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text of a `## heading` section, up to the next heading of that level or higher. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line === `## ${heading}`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = lines.findIndex((line, i) => i > start && /^#{1,2} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The cells of each table row in `text`, backticks removed; separator rows left out. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) => line.slice(1, line.endsWith('|') ? -1 : undefined).split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('`', '')));
}

/**
 * Every environment variable loadConfig reads, asked of loadConfig itself:
 * given an environment in which nothing is set, it reads each variable it
 * knows once and falls back to its default.
 */
function configurationVariables(): string[] {
  const read = new Set<string>();
  const unset = new Proxy({}, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(unset);
  return [...read];
}

/** The anchors GitHub gives a document's headings. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutCodeBlocks(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = match[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  from: string;
  target: string;
}

/** The relative links of a markdown file: not URLs with a scheme, not inside code blocks. */
function relativeLinks(path: string): Link[] {
  const links: Link[] = [];
  for (const match of withoutCodeBlocks(read(path)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push({ from: path, target });
  }
  return links;
}

/** What is wrong with a link, or undefined when it leads somewhere. */
function brokenLink({ from, target }: Link): string | undefined {
  const [file, fragment] = target.split('#', 2);
  const path = file === '' ? from : relative(ROOT, resolve(ROOT, dirname(from), file));
  if (!existsSync(join(ROOT, path))) {
    return DOCUMENTS_IN_PROGRESS.has(path) ? undefined : `${from}: ${target} (no file ${path})`;
  }
  if (fragment === undefined || !path.endsWith('.md')) return undefined;
  if (!headingAnchors(read(path)).has(fragment)) return `${from}: ${target} (no heading #${fragment} in ${path})`;
  return undefined;
}

const userDocuments = (): string[] => [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('docs/operations.md', () => {
  const operations = read('docs/operations.md');

  it('documents every variable the configuration reads, in the configuration table', () => {
    const variables = configurationVariables();
    expect(variables.length).toBeGreaterThan(0);
    const documented = new Set(tableRows(section(operations, 'Configuration')).map((cells) => cells[0]));
    expect(variables.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('names every metric the service exports', () => {
    const metricsSection = section(operations, 'Metrics');
    const registries = new ServiceMetrics({ tenantLabels: false }).registries;
    const names = registries.flatMap((registry) => registry.getMetricsAsArray().map((metric) => metric.name));
    expect(names).toContain('http_request_duration_seconds');
    expect(names.filter((name) => !metricsSection.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('docs/api.md', () => {
  it('has every error code in its error table, with its status, and no other code', () => {
    const rows = tableRows(section(read('docs/api.md'), 'Errors')).filter((cells) => /^[A-Z_]+$/.test(cells[0]));
    const documented = Object.fromEntries(rows.map((cells) => [cells[0], Number(cells[1])]));
    const registry = Object.fromEntries(Object.entries(ERRORS).map(([code, { status }]) => [code, status]));
    expect(rows.length).toBe(Object.keys(documented).length);
    expect(documented).toEqual(registry);
  });
});

describe('README.md', () => {
  it(`is at most ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

describe('links', () => {
  it('every relative link in README.md and docs/*.md leads to an existing file and heading', () => {
    const links = userDocuments().flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(0);
    expect(links.map(brokenLink).filter((problem) => problem !== undefined)).toEqual([]);
  });
});

describe('planning documents', () => {
  it('are never referred to by the tracked user documentation', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((path) => path !== '' && path !== THIS_FILE && !path.startsWith('node_modules/'));
    const checked = tracked.filter(inPlanningReferenceScope);
    expect(checked).toContain('README.md');
    const found: string[] = [];
    for (const path of checked) {
      read(path).split('\n').forEach((line, index) => {
        for (const name of PLANNING_REFERENCES) {
          const match = name.exec(line);
          if (match) found.push(`${path}:${index + 1}: ${match[0]}`);
        }
      });
    }
    expect(found).toEqual([]);
  });
});
