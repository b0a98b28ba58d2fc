import * as fs from 'fs';
import * as path from 'path';

/**
 * docs/ARCHITECTURE.md stays a map a newcomer reads in minutes, and neither it nor the subsystem pages it
 * points to name a file the tree no longer has: the drift that let the old single page list files after
 * they were split or moved.
 */
const ROOT = path.join(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs');

/** The map's budget: beyond it, the detail belongs in a subsystem page or the file's own header. */
const ARCHITECTURE_MAX_LINES = 250;
/** A line longer than this is a table row nobody reads; long detail goes into a list in a subsystem page. */
const MAX_LINE_CHARS = 400;

/** The map and the subsystem pages it sends readers to (PGBOUNCER-ENGINE.md and AWS-RULES.md keep their own form). */
const MAP = 'ARCHITECTURE.md';
const SUBSYSTEM_PAGES = ['MODEL.md', 'CONSTRUCTS.md', 'LAMBDA.md', 'PACKAGING.md', 'TERRAFORM.md', 'REHEARSAL.md', 'BENCH.md', 'CLI.md', 'TESTS.md', 'DECISIONS.md'];
const CHECKED = [MAP, ...SUBSYSTEM_PAGES];

/** Where a code span starts when it names a file or directory of this repository. */
const REPOSITORY_PATH = /^(lib|test|modules|host|lambda|bin|tools|packages|docs)\/[^\s]*$/;

function read(page: string): string {
  return fs.readFileSync(path.join(DOCS, page), 'utf8');
}

/** Code spans outside fenced blocks; a span may wrap over a line break, as Markdown allows. */
function codeSpans(text: string): string[] {
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  return [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' ').trim());
}

/** The spans that look like repository paths: `lib/model/sizing.ts`, `lib/rehearsal/pooler-drills/`, `lib/model/cost-*.ts`. */
function repositoryPaths(text: string): string[] {
  return [...new Set(codeSpans(text).filter((s) => REPOSITORY_PATH.test(s)))];
}

/**
 * One path segment as a pattern: `*` any name, `<handler>` any one name (a placeholder), `{a,b}` either.
 * Undefined when the segment is a plain name.
 */
function segmentPattern(segment: string): RegExp | undefined {
  if (!/[*<{]/.test(segment)) return undefined;
  let source = '';
  for (const part of segment.split(/(\*|<[^>]+>|\{[^}]+\})/)) {
    if (part === '*') source += '[^/]*';
    else if (part.startsWith('<') && part.endsWith('>')) source += '[^/]+';
    else if (part.startsWith('{') && part.endsWith('}')) source += `(${part.slice(1, -1).split(',').map(escape).join('|')})`;
    else source += escape(part);
  }
  return new RegExp(`^${source}$`);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether the tree has a file or directory the written path (with its wildcards and placeholders) names. */
function existsInTree(written: string): boolean {
  const segments = written.replace(/\/$/, '').split('/');
  let candidates = [ROOT];
  for (const segment of segments) {
    const pattern = segmentPattern(segment);
    const next: string[] = [];
    for (const dir of candidates) {
      if (pattern === undefined) {
        const p = path.join(dir, segment);
        if (fs.existsSync(p)) next.push(p);
      } else if (fs.existsSync(dir) && fs.statSync(dir).isDirectory()) {
        next.push(...fs.readdirSync(dir).filter((name) => pattern.test(name)).map((name) => path.join(dir, name)));
      }
    }
    candidates = next;
  }
  return candidates.length > 0 && (!written.endsWith('/') || candidates.some((c) => fs.statSync(c).isDirectory()));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

describe('docs/ARCHITECTURE.md and the subsystem pages', () => {
  test('the path matcher sees a missing file, and a placeholder or wildcard only where the tree has a match', () => {
    // GIVEN paths written as the pages write them
    // WHEN each is looked up in the tree
    // THEN only the ones the tree has are found
    expect(existsInTree('lib/model/sizing.ts')).toBe(true);
    expect(existsInTree('lib/rehearsal/pooler-drills/')).toBe(true);
    expect(existsInTree('lib/model/cost-*.ts')).toBe(true);
    expect(existsInTree('lambda/src/<handler>.ts')).toBe(true);
    expect(existsInTree('lib/model/pgbouncer-fleet-{rules,files}.ts')).toBe(true);
    expect(existsInTree('lib/rehearsal/pooler-drills.ts')).toBe(false);
    expect(existsInTree('lib/model/sizing.ts/')).toBe(false);
    expect(existsInTree('lib/model/no-such-*.ts')).toBe(false);
    expect(repositoryPaths('see `lib/model/sizing.ts` and `make unit`, and\n`lib/terraform/plan-json.ts`')).toEqual(['lib/model/sizing.ts', 'lib/terraform/plan-json.ts']);
  });

  test.each(CHECKED)('every repository path %s names in backticks exists in the tree', (page) => {
    // GIVEN the page's code spans that look like repository paths
    const paths = repositoryPaths(read(page));
    // WHEN each is looked up in the tree
    const missing = paths.filter((p) => !existsInTree(p));
    // THEN none is missing (a renamed or split file is named by its new path)
    expect(missing).toEqual([]);
  });

  test('the map names the paths of what it maps', () => {
    // GIVEN the map
    const paths = repositoryPaths(read(MAP));
    // WHEN its paths are counted
    // THEN it names the tree's main parts by path, so the check above has something to check
    expect(paths.length).toBeGreaterThan(40);
    for (const part of ['lib/model/', 'lib/terraform/', 'lib/rehearsal/', 'lib/bench/', 'lib/cli/', 'lambda/src/', 'packages/cdktn/', 'host/']) {
      expect(paths.some((p) => p.startsWith(part))).toBe(true);
    }
  });

  test(`ARCHITECTURE.md stays within ${ARCHITECTURE_MAX_LINES} lines`, () => {
    // GIVEN the map
    const lines = read(MAP).split('\n').length;
    // WHEN its lines are counted
    // THEN it stays within its budget
    expect(lines).toBeLessThanOrEqual(ARCHITECTURE_MAX_LINES);
  });

  test.each(CHECKED)(`no line of %s is over ${MAX_LINE_CHARS} characters`, (page) => {
    // GIVEN the page's lines
    const long = read(page).split('\n').map((line, i) => ({ line: i + 1, chars: line.length })).filter((l) => l.chars > MAX_LINE_CHARS);
    // WHEN the long ones are listed
    // THEN there are none
    expect(long).toEqual([]);
  });

  test('every page the map links to exists, and every subsystem page links back to the map', () => {
    // GIVEN the map's relative links to pages
    const links = [...read(MAP).matchAll(/\]\(([A-Z][A-Z-]*\.md)(#[^)]*)?\)/g)].map((m) => m[1]!);
    // WHEN each is looked up
    // THEN it exists, and each subsystem page is linked and links back
    for (const link of links) expect(fs.existsSync(path.join(DOCS, link))).toBe(true);
    for (const page of SUBSYSTEM_PAGES) {
      expect(links).toContain(page);
      expect(read(page)).toContain('](ARCHITECTURE.md)');
    }
  });

  test('every link to an anchor of ARCHITECTURE.md reaches one of its headings', () => {
    // GIVEN the links to ARCHITECTURE.md#<anchor> in the README, CONTRIBUTING.md and the docs, and the map's own #<anchor>
    const anchors = new Set(read(MAP).split('\n').filter((l) => /^#+ /.test(l)).map((l) => anchorOf(l.replace(/^#+ /, ''))));
    const sources = ['README.md', 'CONTRIBUTING.md', ...fs.readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];
    const wanted = sources.flatMap((f) => [...fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/ARCHITECTURE\.md#([\w-]+)/g)].map((m) => ({ f, anchor: m[1]! })));
    wanted.push(...[...read(MAP).matchAll(/\]\(#([\w-]+)\)/g)].map((m) => ({ f: MAP, anchor: m[1]! })));
    // WHEN each anchor is looked up among the map's headings
    const broken = wanted.filter((w) => !anchors.has(w.anchor));
    // THEN none is broken
    expect(broken).toEqual([]);
  });
});
