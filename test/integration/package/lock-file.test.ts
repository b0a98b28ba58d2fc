/**
 * `make package` (and every target behind node-deps) installs the kit's npm packages: it must leave
 * package-lock.json as committed. npm 11 rewrites a lock that lacks the optional platform packages of
 * other systems unless told not to save.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..', '..');

/** The npm command of the Makefile's node-deps recipe, as make would run it. */
function nodeDepsInstallCommand(): string {
  const recipe = execFileSync('make', ['-n', '-B', 'node-deps'], { cwd: ROOT, encoding: 'utf8' });
  const line = recipe.split('\n').find((l) => /^npm install\b/.test(l));
  if (line === undefined) throw new Error(`node-deps runs no npm install:\n${recipe}`);
  return line;
}

describe('package-lock.json after node-deps', () => {
  test('GIVEN the committed package.json and package-lock.json WHEN node-deps\' npm install resolves them THEN the lock file is unchanged', () => {
    // GIVEN a copy of the manifest and the lock, away from the shared node_modules
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lock-file-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
      const before = fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
      // WHEN the recipe's command runs there, resolving only (nothing is downloaded into node_modules)
      const r = spawnSync('bash', ['-c', `${nodeDepsInstallCommand()} --package-lock-only --ignore-scripts --prefer-offline`], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
      // THEN
      expect([r.status, r.stderr]).toEqual([0, '']);
      expect(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8') === before).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
