import * as fs from 'fs';
import * as path from 'path';
import { KIT_HANDLERS } from '../../lib/private/handler-function';
import { PYTHON_DIST_NAME } from '../../lib/packaging/python-package';

/**
 * The README's Install section names only what works today: no registry carries the kit, so nothing in the
 * README installs it from one, and each artifact it names is what `make package` writes, at the version
 * package.json gives. When a release publishes to a registry (or packages cdktn), this test says which
 * README lines to change with it.
 */
const ROOT = path.join(__dirname, '..', '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const install = readme.slice(readme.indexOf('## Install\n'), readme.indexOf('\n## ', readme.indexOf('## Install\n') + 1));
/** What a user would run: the fenced blocks and the table's "Install it with" cells. */
const runnable = [...readme.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n')
  + [...install.matchAll(/^\|[^|]+\|[^|]+\|([^|]+)\|$/gm)].map((m) => m[1]!).join('\n');

describe('README install section', () => {
  test('GIVEN the README WHEN its Install section is read THEN it says no registry carries the kit yet', () => {
    expect(install.length).toBeGreaterThan(0);
    expect(install).toContain('No registry carries the kit yet');
  });

  test('GIVEN what the README has a user run WHEN read THEN nothing installs the kit from npm or PyPI by name', () => {
    expect(runnable.match(/(npm install|npm i|pip install|yarn add)( [^\n]*)? (aurora-proxy-kit|aurora_proxy_kit|aurora-proxy-kit-cdktn)(@[^\s]*)?(\s|$)/g)).toBeNull();
  });

  test('GIVEN the artifacts the section names WHEN compared with the build THEN each is what make package writes at this version', () => {
    expect(install).toContain(`${manifest.name}-${manifest.version}.tgz`);
    expect(install).toContain(`${PYTHON_DIST_NAME}-${manifest.version}-py3-none-any.whl`);
    expect(install).toContain(`lambda/{${KIT_HANDLERS.join(',')}}.zip`);
    // and no other version of them
    expect([...new Set([...install.matchAll(/aurora[-_]proxy[-_]kit-(\d+\.\d+\.\d+)/g)].map((m) => m[1]))]).toEqual([manifest.version]);
  });

  test('GIVEN the section says cdktn is not packaged WHEN the package and the Makefile are read THEN that is still so', () => {
    expect(install).toMatch(/cdktn \| not among `make package`'s artifacts: `packages\/cdktn` is `"private": true`/);
    const cdktn = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'cdktn', 'package.json'), 'utf8')) as { private?: boolean };
    const packageRecipe = /^package:.*\n((?:\t.*\n)+)/m.exec(fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8'))?.[1];
    expect([cdktn.private, packageRecipe?.includes('cdktn')]).toEqual([true, false]);
  });
});
