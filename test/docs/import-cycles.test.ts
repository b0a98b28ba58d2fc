import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/**
 * No import cycle in the kit's code: a module that needs another's type or value imports it from a module
 * below both, never back. Type-only imports count too: they tie the files together for a reader as much as
 * values do, and a type import turned into a value import later would become a runtime cycle.
 */
const ROOT = path.join(__dirname, '..', '..');
const SOURCE_DIRS = ['lib', 'lambda/src', 'bin', 'packages/cdktn/src'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(file);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** A relative import resolved as TypeScript does for these files (file.ts, then dir/index.ts); packages are not followed. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => fs.existsSync(candidate));
}

/** Every file's imports, re-exports and requires of other files of the kit. */
export function importGraph(dirs: ReadonlyArray<string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of dirs.flatMap((d) => sourceFiles(path.join(ROOT, d)))) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    graph.set(file, [...new Set(importedFiles.map((i) => resolveImport(file, i.fileName)).filter((f): f is string => f !== undefined))]);
  }
  return graph;
}

/** The strongly connected components with more than one file, or one file importing itself (Tarjan). */
export function importCycles(graph: ReadonlyMap<string, ReadonlyArray<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.map((f) => path.relative(ROOT, f)).sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

test('GIVEN two files importing each other, directly or through others, WHEN the cycles are looked for THEN each is found once', () => {
  const f = (name: string) => path.join(ROOT, name);
  const graph = new Map([
    [f('a.ts'), [f('b.ts')]],
    [f('b.ts'), [f('c.ts'), f('d.ts')]],
    [f('c.ts'), [f('a.ts')]],
    [f('d.ts'), [f('d.ts')]],
    [f('e.ts'), [f('a.ts')]],
  ]);
  expect(importCycles(graph)).toEqual(expect.arrayContaining([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]));
  expect(importCycles(graph)).toHaveLength(2);
});

test(`GIVEN the kit's sources (${SOURCE_DIRS.join(', ')}) WHEN their imports are followed THEN no file reaches itself`, () => {
  const graph = importGraph(SOURCE_DIRS);
  // The graph is the real one: the library's entry point reaches its constructs.
  expect(graph.get(path.join(ROOT, 'lib', 'index.ts'))).toContain(path.join(ROOT, 'lib', 'pgbouncer-proxy.ts'));
  expect(importCycles(graph)).toEqual([]);
});
