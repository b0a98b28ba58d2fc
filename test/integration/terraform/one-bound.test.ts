import * as fs from 'fs';
import * as path from 'path';
import * as model from '../../../lib/model';
import { PROXY_RULES } from '../../../lib/model';
import { renderAll } from '../../../lib/terraform';

/**
 * A bound lives in its rule row and in generated copies only: the borrow timeout's range is stated by the
 * `borrow-timeout` row, rendered into both proxy modules' validations, their vector tests, READMEs and the
 * cdktn constructs; the hand-written JSDoc and variable descriptions name the rule instead of restating it,
 * for the borrow timeout and every other integer range of the tables.
 */
const ROOT = path.join(__dirname, '..', '..', '..');
const row = PROXY_RULES.find((r) => r.id === 'borrow-timeout') as { min: number; max: number } | undefined;

/** Lines about the borrow timeout that state `min..max`, `min to max` or `<= max`, by file. */
function boundStatements(files: ReadonlyMap<string, string>, min: number, max: number): string[] {
  const states = new RegExp(`\\b${min}\\s*(?:\\.\\.|to)\\s*${max}\\b|<=\\s*${max}\\b`);
  return [...files].flatMap(([file, text]) => text.split('\n').filter((l) => /borrow/i.test(l) && states.test(l)).map((l) => `${file}: ${l.trim()}`));
}

function handWritten(dir: string, ext: string): Map<string, string> {
  const walk = (d: string): string[] =>
    fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'node_modules' || e.name === '.terraform' ? [] : walk(path.join(d, e.name))) : e.name.endsWith(ext) ? [path.join(d, e.name)] : []));
  return new Map(walk(path.join(ROOT, dir)).map((f) => [path.relative(ROOT, f), fs.readFileSync(f, 'utf8')]));
}

/** What `make terraform-generate` would write were the row's literal `max` one less: the model loaded afresh with that row. */
function renderWithBorrowTimeoutMax(max: number): Map<string, string> {
  let files: Map<string, string> | undefined;
  jest.isolateModules(() => {
    jest.doMock('../../../lib/model/rule-table', () => {
      const actual = jest.requireActual<typeof import('../../../lib/model/rule-table')>('../../../lib/model/rule-table');
      return { ...actual, integerRange: (r: Parameters<typeof actual.integerRange>[0]) => actual.integerRange(r.id === 'borrow-timeout' ? { ...r, max } : r) };
    });
    files = (jest.requireActual<typeof import('../../../lib/terraform')>('../../../lib/terraform')).renderAll();
  });
  jest.dontMock('../../../lib/model/rule-table');
  return files!;
}

test('GIVEN the borrow-timeout row WHEN its upper bound changes and the generated files are rendered again THEN every copy of the bound changes', () => {
  expect(row).toBeDefined();
  const { min, max } = row!;
  // GIVEN the copies a render makes today
  const before = boundStatements(renderAll(), min, max);
  expect(before.length).toBeGreaterThanOrEqual(8);
  // WHEN the row says otherwise
  const after = renderWithBorrowTimeoutMax(max - 1);
  // THEN no generated file keeps the old bound, and each file that stated it states the new one
  // (at least as often: the vector tests also note that the shared vector at the old bound is now rejected)
  expect(boundStatements(after, min, max)).toEqual([]);
  const filesOf = (statements: string[]) => [...new Set(statements.map((l) => l.slice(0, l.indexOf(': '))))].sort();
  const restated = boundStatements(after, min, max - 1);
  expect(filesOf(restated)).toEqual(filesOf(before));
  expect(restated.length).toBeGreaterThanOrEqual(before.length);
});

test('GIVEN the hand-written JSDoc and variable descriptions WHEN read THEN none restates an integer range of a rule row', () => {
  // Every integer-range row of the model's tables, by id (a row shared by two tables counts once).
  const ranges = new Map(
    (Object.values(model) as unknown[])
      .filter((v): v is ReadonlyArray<{ kind?: string; id: string; min: number; max: number }> => Array.isArray(v))
      .flat()
      .filter((r) => r?.kind === 'integer-range')
      .map((r) => [r.id, r] as const),
  );
  expect(ranges.get('borrow-timeout')).toBeDefined();
  expect(ranges.size).toBeGreaterThanOrEqual(10);
  // The constructs' and the model's JSDoc lines, and the modules' descriptions (generated regions cut out).
  const constructs = [...handWritten('lib', '.ts')].filter(([file]) => !file.startsWith(path.join('lib', 'model', 'rules')) && /^lib\/(model\/)?[\w-]+\.ts$/.test(file));
  const jsdoc = constructs.flatMap(([file, text]) => text.split('\n').filter((l) => /^\s*(\/\*\*|\*)/.test(l)).map((l) => [file, l] as const));
  const descriptions = [...handWritten('modules', '.tf')].flatMap(([file, text]) =>
    text.replace(/# BEGIN generated[\s\S]*?# END generated \S+/g, '').split('\n').filter((l) => /^\s*description\s*=/.test(l)).map((l) => [file, l] as const),
  );
  const restated = [...ranges.values()].flatMap(({ id, min, max }) => {
    const states = new RegExp(`\\b${min}\\s*(?:\\.\\.|to)\\s*${max}\\b`);
    return [...jsdoc, ...descriptions].filter(([, l]) => states.test(l)).map(([file, l]) => `${id}: ${file}: ${l.trim()}`);
  });
  expect(restated).toEqual([]);
});
