import * as fs from 'fs';
import * as path from 'path';

/**
 * The Makefile's shape: `make help` prints each target's `## <target>: ...` line, so that line sits right above
 * the target's recipe (comments may come between, nothing else), and every target is named once in one .PHONY
 * list, as none of them makes a file of its name.
 */
const MAKEFILE = fs.readFileSync(path.join(__dirname, '..', '..', 'Makefile'), 'utf8');
const LINES = MAKEFILE.split('\n');
/** Targets written as `name: ...` (not `name := ...` variables, not file targets with a path). */
const TARGETS = LINES.flatMap((l) => /^([a-z][a-z-]*):(?!=)/.exec(l)?.[1] ?? []);

describe('Makefile', () => {
  test('every target but help has a ## help line directly above its recipe (comments may come between)', () => {
    // GIVEN the help lines and where they are
    const misplaced = LINES.flatMap((line, i) => {
      const target = /^## ([a-z-]+):/.exec(line)?.[1];
      if (target === undefined) return [];
      let next = i + 1;
      while (LINES[next]?.startsWith('#')) next += 1;
      return LINES[next]?.startsWith(`${target}:`) ? [] : [`${target} (line ${i + 1}) is followed by: ${LINES[next]}`];
    });
    const documented = new Set(LINES.flatMap((l) => /^## ([a-z-]+):/.exec(l)?.[1] ?? []));
    // THEN
    expect(misplaced).toEqual([]);
    expect(TARGETS.filter((t) => t !== 'help' && !documented.has(t))).toEqual([]);
  });

  test('one .PHONY list names every target', () => {
    // WHEN
    const declarations = MAKEFILE.match(/^\.PHONY:(?:[^\n]*\\\n)*[^\n]*/gm) ?? [];
    const phony = declarations.flatMap((d) => d.replace(/^\.PHONY:/, '').replace(/\\\n/g, ' ').split(/\s+/).filter(Boolean));
    // THEN
    expect(declarations).toHaveLength(1);
    expect([...phony].sort()).toEqual([...new Set(TARGETS)].sort());
  });
});
