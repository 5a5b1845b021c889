/**
 * The user documentation against the code it describes: every setting the
 * configuration reads, every error code and every metric is documented
 * where a user looks for it; the README stays a short guide; relative links
 * lead to files (and headings) that exist; and the documentation never
 * sends readers to planning documents that are not part of the repository.
 *
 * Facts come from the code itself (the configuration module, the error
 * registry, the metric registries, the CLI's parser and usage, the OpenAPI
 * document the service serves), never from lists kept in this file, so
 * adding a variable, a code, a metric, a command or a route without
 * documenting it fails here, and so does documenting one that is not there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/parse-command.ts';
import { USAGE } from '../../src/cli/usage.ts';
import { CONFIG_VARIABLES, type ConfigVariable, loadConfig } from '../../src/config.ts';
import { ERRORS } from '../../src/errors.ts';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

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

/** What the bounds cell of a variable's row must say (its start, for integers: more may follow a `;`). */
function documentedBounds(variable: ConfigVariable): string[] {
  switch (variable.kind) {
    case 'integer': return [variable.max === undefined ? `at least ${variable.min}` : `${variable.min}-${variable.max}`];
    case 'choice': return [...variable.choices];
    case 'url': return variable.protocols.map((protocol) => `${protocol}//`);
    default: return [];
  }
}

/** What is wrong with one row of the configuration table, or undefined. */
function configurationRowProblem([name, fallback, bounds]: string[]): string | undefined {
  const variable = CONFIG_VARIABLES.find((candidate) => candidate.name === name);
  if (variable === undefined) return `${name}: not a variable of src/config.ts`;
  const expectedDefault = variable.default === undefined ? 'unset' : String(variable.default);
  if (fallback !== expectedDefault) return `${name}: default "${fallback}", the code has "${expectedDefault}"`;
  const expectedBounds = documentedBounds(variable);
  if (variable.kind === 'integer') {
    if (bounds !== expectedBounds[0] && !bounds.startsWith(`${expectedBounds[0]};`)) return `${name}: bounds "${bounds}", the code has "${expectedBounds[0]}"`;
  } else {
    const missing = expectedBounds.filter((bound) => !bounds.includes(bound));
    if (missing.length > 0) return `${name}: bounds "${bounds}" leave out ${missing.join(', ')}`;
  }
  return undefined;
}

/** The command syntaxes of the CLI's usage text: the first column of its Commands. */
function usageCommands(): string[] {
  const commands = USAGE.slice(USAGE.indexOf('Commands:\n'), USAGE.indexOf('\nOptions:'));
  return commands
    .split('\n')
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => line.trim().split(/\s{2,}/)[0]);
}

/** Sample values for the placeholders of a command syntax. */
const SAMPLE_ARGUMENTS: Record<string, string> = {
  '<tenant>': 'acme', '<context>': 'orders', '<name>': 'ci', '<keyId>': '880ea52c-55dc-41cd-8c5d-f58055598eaf',
  '<max>': '100', '<windowMs>': '60000', FILE: 'rules.json', N: '5',
};

/**
 * A command line for a syntax: placeholders get sample values, every
 * optional part is given, and of alternatives (`admin|validator`) the first.
 *
 * @example
 * sampleCommandLine('impact <tenant> <context> [--target draft|N]'); // ['impact', 'acme', 'orders', '--target', 'draft']
 */
function sampleCommandLine(syntax: string): string[] {
  return syntax
    .replace(/[[\]]/g, ' ')
    .replace(/\|\S+/g, '')
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) => SAMPLE_ARGUMENTS[word] ?? word);
}

/** The `--flags` a text names. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((match) => match[0]));
}

/** The sections of a markdown document by heading line (`### POST /api/v1/rules`), each with its text up to the next heading of its level or higher. */
function sectionsByHeading(markdown: string): Map<string, string> {
  const lines = withoutCodeBlocks(markdown).split('\n');
  const sections = new Map<string, string>();
  lines.forEach((line, start) => {
    const level = /^(#{1,6}) /.exec(line)?.[1].length;
    if (level === undefined) return;
    const end = lines.findIndex((other, i) => i > start && new RegExp(`^#{1,${level}} `).test(other));
    sections.set(line, lines.slice(start + 1, end < 0 ? undefined : end).join('\n'));
  });
  return sections;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

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

  it('gives each variable of the configuration table the default and bounds the configuration has, and names no other', () => {
    const rows = tableRows(section(operations, 'Configuration')).filter((cells) => cells[0] !== 'variable');
    expect(rows.length).toBe(CONFIG_VARIABLES.length);
    expect(rows.map(configurationRowProblem).filter((problem) => problem !== undefined)).toEqual([]);
  });

  it('names every metric the service exports', () => {
    const metricsSection = section(operations, 'Metrics');
    const registries = new ServiceMetrics({ tenantLabels: false }).registries;
    const names = registries.flatMap((registry) => registry.getMetricsAsArray().map((metric) => metric.name));
    expect(names).toContain('http_request_duration_seconds');
    expect(names.filter((name) => !metricsSection.includes(`\`${name}\``))).toEqual([]);
  });

  it('lists no metric the service does not export', () => {
    const registries = new ServiceMetrics({ tenantLabels: false }).registries;
    const exported = new Set(registries.flatMap((registry) => registry.getMetricsAsArray().map((metric) => metric.name)));
    const listed = tableRows(section(operations, 'Metrics'))
      .filter((cells) => cells[0] !== 'metric')
      .flatMap((cells) => cells[0].split(/,\s*/));
    expect(listed.length).toBeGreaterThan(20);
    expect(listed.filter((name) => !exported.has(name))).toEqual([]);
  });

  describe('CLI', () => {
    const cli = section(operations, 'CLI');
    const documented = tableRows(cli)
      .filter((cells) => cells[0] !== 'command')
      .flatMap((cells) => cells[0].replaceAll('\\|', '|').split(/,\s*/));

    it('has a row for every command of the usage text (--help), and no other', () => {
      const help = ['--help', '-h', 'help'];
      expect(documented.filter((syntax) => !help.includes(syntax)).sort()).toEqual(usageCommands().sort());
      expect(documented).toEqual(expect.arrayContaining(help));
    });

    it('shows commands the CLI accepts, with every option written', () => {
      const refused: string[] = [];
      for (const syntax of documented) {
        const argv = sampleCommandLine(syntax);
        for (const line of [argv, [...argv, '--json']]) {
          try {
            parseCommandLine(line);
          } catch (error) {
            refused.push(`${line.join(' ')}: ${(error as Error).message}`);
          }
        }
      }
      expect(refused).toEqual([]);
    });

    it('names the same options as the usage text', () => {
      expect([...flagsIn(cli)].sort()).toEqual([...flagsIn(USAGE)].sort());
    });
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

describe('docs/api.md and the OpenAPI document the service serves', () => {
  const api = read('docs/api.md');
  let t: TestApp;
  let operations: Array<{ method: string; path: string; statuses: string[] }>;
  let warningCodes: string[];
  let auditActions: string[];

  beforeAll(async () => {
    t = await startTestApp();
    const response = await fetch(`${t.baseUrl}/docs/json`);
    expect(response.status).toBe(200);
    const document = await response.json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: Array<{ name: string; schema: { enum?: string[] } }> }>>;
      components: { schemas: { RuleWarning: { properties: { code: { enum: string[] } } } } };
    };
    warningCodes = document.components.schemas.RuleWarning.properties.code.enum;
    auditActions = document.paths['/api/v1/audit'].get.parameters?.find((parameter) => parameter.name === 'action')?.schema.enum ?? [];
    operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, statuses: Object.keys(operation.responses) })));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('names every operation, as METHOD and path', () => {
    expect(operations.length).toBeGreaterThan(30);
    expect(operations.map(({ method, path }) => `${method} ${path}`).filter((route) => !api.includes(route))).toEqual([]);
  });

  it('names no operation the service does not have (`/rules` standing for `/api/v1/rules`)', () => {
    const served = new Set(operations.map(({ method, path }) => `${method} ${path}`));
    const named = [...withoutCodeBlocks(api).matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[\w{}/.-]*\w[}]?)/g)]
      .map(([, method, path]) => `${method} ${/^\/(rules|contexts|api-keys|tenant|audit|validation)\b/.test(path) ? `/api/v1${path}` : path}`)
      .filter((route) => !/ \/(docs|console)\b/.test(route));
    expect(named.length).toBeGreaterThan(50);
    expect([...new Set(named)].filter((route) => !served.has(route))).toEqual([]);
  });

  it('names every warning code a rule can get, and rule-language.md explains each in a section of its own', () => {
    expect(warningCodes.length).toBeGreaterThan(3);
    const listed = section(api, 'Rules').match(/`code` is one of ([^(]*)\(/)?.[1] ?? '';
    expect([...listed.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]).sort()).toEqual([...warningCodes].sort());
    const warnings = section(read('docs/rule-language.md'), '15. Warnings');
    expect([...warnings.matchAll(/^### ([A-Z_]+)$/gm)].map((match) => match[1]).sort()).toEqual([...warningCodes].sort());
  });

  it('lists every audit action, those GET /api/v1/audit filters by', () => {
    expect(auditActions.length).toBeGreaterThan(10);
    const audit = sectionsByHeading(api).get('### GET /api/v1/audit') ?? '';
    const bullet = /^- `action`:([\s\S]*?)^- /m.exec(audit)?.[1] ?? '';
    expect([...new Set([...bullet.matchAll(/`([a-z]+\.[a-z-]+)`/g)].map((match) => match[1]))].sort()).toEqual([...auditActions].sort());
  });

  it('gives, in the section of each operation that has one, its success status and its 409', () => {
    const sections = sectionsByHeading(api);
    const missing: string[] = [];
    for (const { method, path, statuses } of operations) {
      const heading = [...sections.keys()].find((line) => / (GET|POST|PUT|PATCH|DELETE) /.test(line) && line.endsWith(` ${method} ${path}`));
      if (heading === undefined) continue;
      const text = sections.get(heading) ?? '';
      // The statuses every call of a group shares are said once, above the group's first operation.
      const group = [...sections.entries()].find(([line, body]) => line.startsWith('## ') && body.includes(heading))?.[1] ?? '';
      const intro = group.slice(0, group.search(/^###/m));
      for (const status of statuses.filter((code) => ['201', '204', '409'].includes(code))) {
        if (!text.includes(status) && !intro.includes(status)) missing.push(`${method} ${path}: ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('npm scripts', () => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);

  it('every `npm run` command of the user documentation is a script of package.json', () => {
    const named = [...userDocuments(), 'bench/README.md'].flatMap((path) =>
      [...read(path).matchAll(/\bnpm run (?:-s |--silent )?([a-z][\w:-]*)/g)].map((match) => ({ path, script: match[1] })));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter(({ script }) => !scripts.includes(script)).map(({ path, script }) => `${path}: npm run ${script}`)).toEqual([]);
  });

  it('bench/README.md has a row of its Running them table for every benchmark script', () => {
    const rows = tableRows(section(read('bench/README.md'), 'Running them')).map((cells) => cells[0]);
    const benchmarks = scripts.filter((script) => script === 'bench' || script.startsWith('bench:'));
    expect(benchmarks.length).toBeGreaterThan(5);
    expect(benchmarks.filter((script) => !rows.includes(`npm run ${script}`))).toEqual([]);
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
