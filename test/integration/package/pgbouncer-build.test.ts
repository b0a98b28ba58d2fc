/**
 * The kit's one PgBouncer (tools/build-pgbouncer.sh): the rehearsal's binary and the hosts' Debian 13 arm64
 * package are built from the same pinned source with the patches in tools/pgbouncer-patches/, and the
 * comparison fails when they are not. The real builds run once (minutes on 2 cores) and are cached under
 * .cache/ by source version and patch hashes, so later runs take seconds.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  PGBOUNCER_MINIMUM_VERSION,
  PGBOUNCER_PATCHES_DIR,
  PgBouncerBuild,
  PgBouncerDebBuild,
  buildPgBouncerDeb,
  buildRehearsalPgBouncer,
  checkArchitecture,
  checkSameBuild,
  patchSet,
  readDebBuild,
  readRehearsalBuild,
  versionAtLeast,
} from '../../../lib/packaging/pgbouncer-build';
import { PoolerPackagesError } from '../../../lib/packaging/pooler-packages';

const PINNED_SOURCE = 'pgbouncer (1.25.2)';

/** A copy of the repository's patches in a directory of the test's own. */
function copyPatches(dir: string): string {
  const copy = fs.mkdtempSync(path.join(dir, 'patches-'));
  for (const f of fs.readdirSync(PGBOUNCER_PATCHES_DIR)) fs.copyFileSync(path.join(PGBOUNCER_PATCHES_DIR, f), path.join(copy, f));
  return copy;
}

/** `deb` repacked with its control's `field` set to `value` (the binary and everything else unchanged). */
function repack(deb: string, dir: string, field: string, value: string): string {
  const root = fs.mkdtempSync(path.join(dir, 'repack-'));
  execFileSync('dpkg-deb', ['--raw-extract', deb, root]);
  const control = path.join(root, 'DEBIAN', 'control');
  fs.writeFileSync(control, fs.readFileSync(control, 'utf8').replace(new RegExp(`^${field}: .*$`, 'm'), `${field}: ${value}`));
  const out = path.join(dir, `${path.basename(root)}.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, out], { stdio: 'ignore' });
  return out;
}

describe('patchSet', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-patch-set-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('GIVEN patches and other files WHEN read THEN each patch as name=sha256 in the C locale\'s order, as the build script applies them', () => {
    fs.writeFileSync(path.join(dir, 'b.patch'), 'b\n');
    fs.writeFileSync(path.join(dir, 'B.patch'), 'B\n');
    fs.writeFileSync(path.join(dir, 'README'), 'not a patch');
    // sha256sum's own digests, and B before b (the C locale sorts by bytes)
    const sum = (f: string) => execFileSync('sha256sum', [path.join(dir, f)], { encoding: 'utf8' }).split(' ')[0];
    expect(patchSet(dir)).toBe(`B.patch=${sum('B.patch')},b.patch=${sum('b.patch')}`);
  });

  test('GIVEN no patches WHEN read THEN none', () => {
    expect(patchSet(dir)).toBe('none');
  });
});

describe('checkArchitecture', () => {
  test('GIVEN an architecture the kit does not build for WHEN checked THEN it fails naming it and the ones it builds', () => {
    expect(checkArchitecture('arm64')).toBe('arm64');
    expect(() => checkArchitecture('armhf')).toThrow(new PoolerPackagesError("architecture 'armhf' is not one the kit builds PgBouncer for: give arm64 or amd64 (arm64 for the hosts)"));
  });
});

describe('the rehearsal\'s PgBouncer and the hosts\' package (tools/build-pgbouncer.sh)', () => {
  let dir: string;
  let rehearsal: PgBouncerBuild;
  let deb: string;
  let hosts: PgBouncerDebBuild;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pgbouncer-build-'));
    // GIVEN both builds, as `make pgbouncer` and `make pooler-packages` make them
    buildRehearsalPgBouncer();
    deb = buildPgBouncerDeb('arm64');
    rehearsal = readRehearsalBuild();
    hosts = readDebBuild(deb);
  }, 900_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('GIVEN both builds WHEN compared THEN the same pinned source and the repository\'s patches, the rehearsal\'s binary reports its version and the package\'s is for arm64', () => {
    // WHEN
    expect(() => checkSameBuild(rehearsal, hosts, 'arm64')).not.toThrow();
    // THEN
    expect(rehearsal.source).toBe(PINNED_SOURCE);
    expect(hosts.source).toBe(PINNED_SOURCE);
    expect(rehearsal.version).toBe('1.25.2');
    expect(hosts.version).toBe(rehearsal.version);
    expect(versionAtLeast(hosts.version, PGBOUNCER_MINIMUM_VERSION)).toBe(true);
    expect(hosts.patches).toBe(patchSet());
    // Every patch of the directory, the forced-user SCRAM fix among them.
    expect(hosts.patches).toMatch(/^[a-z0-9.-]+\.patch=[0-9a-f]{64}(,[a-z0-9.-]+\.patch=[0-9a-f]{64})*$/);
    expect(hosts.patches.split(',').map((p) => p.split('=')[0])).toContain('forced-user-scram-keys.patch');
    expect(hosts).toMatchObject({ packageVersion: '1.25.2-0+apk1', architecture: 'arm64', binaryArchitecture: 'arm64' });
    expect(path.basename(deb)).toBe('pgbouncer_1.25.2-0+apk1_arm64.deb');
  });

  test('GIVEN the package WHEN read THEN it is Debian\'s package of the source (units, conffiles, maintainer scripts, dependencies) with the binary for systemd\'s notify units', () => {
    const fields = execFileSync('dpkg-deb', ['--field', deb, 'Depends'], { encoding: 'utf8' });
    // Debian's dependencies, libsystemd0 and libpam0g among them: configured as debian/rules does
    expect(fields).toMatch(/libsystemd0/);
    expect(fields).toMatch(/libpam0g/);
    expect(fields).toMatch(/libcares2/);
    const contents = execFileSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8' });
    expect(contents).toMatch(/\.\/usr\/lib\/systemd\/system\/pgbouncer\.service\n/);
    expect(contents).toMatch(/\.\/usr\/sbin\/pgbouncer\n/);
    const control = fs.mkdtempSync(path.join(dir, 'control-'));
    execFileSync('dpkg-deb', ['--control', deb, control]);
    expect(fs.readdirSync(control).sort()).toEqual(expect.arrayContaining(['conffiles', 'md5sums', 'postinst', 'postrm']));
    // the md5sums match the files the package holds (the replaced binary's line among them)
    const root = fs.mkdtempSync(path.join(dir, 'root-'));
    execFileSync('dpkg-deb', ['--extract', deb, root]);
    expect(() => execFileSync('md5sum', ['--check', '--strict', '--quiet', path.join(control, 'md5sums')], { cwd: root })).not.toThrow();
    // sd_notify, which Type=notify units (Debian's and the kit's) wait for, is linked in
    expect(execFileSync('readelf', ['--dyn-syms', '--wide', path.join(root, 'usr', 'sbin', 'pgbouncer')], { encoding: 'utf8' })).toMatch(/\bsd_notify\b/);
  });

  test('GIVEN the repository\'s patches changed after the builds (one patch edited, one added, one removed) WHEN compared THEN it fails naming both builds\' patches and the directory\'s', () => {
    const edited = copyPatches(dir);
    fs.appendFileSync(path.join(edited, 'forced-user-scram-keys.patch'), '\n');
    const added = copyPatches(dir);
    fs.writeFileSync(path.join(added, 'zz-another-fix.patch'), '--- a/src/client.c\n+++ b/src/client.c\n');
    const removed = fs.mkdtempSync(path.join(dir, 'patches-'));
    for (const patches of [edited, added, removed]) {
      const message = /not the same build: .*BUILD-INFO has the patches '[^']*forced-user-scram-keys\.patch=[0-9a-f]{64}[^']*', .*patches-\w+ '.*'.*pgbouncer_1\.25\.2-0\+apk1_arm64\.deb has the patches .*Rebuild both: make pgbouncer and make pooler-packages$/;
      expect(() => checkSameBuild(rehearsal, hosts, 'arm64', patches)).toThrow(message);
    }
    expect(() => checkSameBuild(rehearsal, hosts, 'arm64', added)).toThrow(/zz-another-fix\.patch=/);
    expect(() => checkSameBuild(rehearsal, hosts, 'arm64', removed)).toThrow(/patches-\w+ 'none'/);
  });

  test('GIVEN a package whose recorded patches differ from the rehearsal\'s WHEN compared THEN it fails naming the package', () => {
    const other = readDebBuild(repack(deb, dir, 'X-Apk-Patches', `forced-user-scram-keys.patch=${'0'.repeat(64)}`));
    expect(other.patches).toBe(`forced-user-scram-keys.patch=${'0'.repeat(64)}`);
    expect(() => checkSameBuild(rehearsal, other, 'arm64')).toThrow(new RegExp(`repack-\\w+\\.deb has the patches 'forced-user-scram-keys\\.patch=${'0'.repeat(64)}'`));
  });

  test('GIVEN a package of another source WHEN compared THEN it fails naming both sources', () => {
    const other = readDebBuild(repack(deb, dir, 'Source', 'pgbouncer (1.25.3)'));
    expect(() => checkSameBuild(rehearsal, other, 'arm64')).toThrow(/the source differs: .*BUILD-INFO has 'pgbouncer \(1\.25\.2\)', .*repack-\w+\.deb 'pgbouncer \(1\.25\.3\)'/);
  });

  test('GIVEN a package that claims amd64 but holds the arm64 binary, or is Debian\'s own version WHEN compared THEN it fails', () => {
    const claimsAmd64 = readDebBuild(repack(deb, dir, 'Architecture', 'amd64'));
    expect(() => checkSameBuild(rehearsal, claimsAmd64, 'amd64')).toThrow(/is for amd64 with a binary for arm64, not amd64/);
    const debians = readDebBuild(repack(deb, dir, 'Version', '1.24.1-1+deb13u2'));
    expect(() => checkSameBuild(rehearsal, debians, 'arm64')).toThrow(/has the version 1\.24\.1-1\+deb13u2 and the source .*not the kit's build/);
  });

  test('GIVEN a rehearsal binary that reports another version than its source WHEN compared THEN it fails', () => {
    expect(() => checkSameBuild({ ...rehearsal, version: '1.18.0' }, hosts, 'arm64')).toThrow(/the rehearsal's binary reports PgBouncer 1\.18\.0, not 1\.25\.2 of its source/);
  });

  test('GIVEN a package of a source older than the minimum (Debian 13\'s 1.24.1, its backports aside) WHEN checked THEN it fails naming the version and the CVEs', () => {
    const old = readDebBuild(repack(repack(deb, dir, 'Source', 'pgbouncer (1.24.1)'), dir, 'Version', '1.24.1-0+apk1'));
    expect(() => checkSameBuild({ ...rehearsal, source: 'pgbouncer (1.24.1)', version: '1.24.1' }, old, 'arm64')).toThrow(/is PgBouncer 1\.24\.1, older than 1\.25\.2 \(CVE-2026-6664\.\.6667\)/);
  });
});

describe('versionAtLeast', () => {
  test.each([
    ['1.25.2', '1.25.2', true],
    ['1.26.0', '1.25.2', true],
    ['1.25.10', '1.25.2', true],
    ['2.0', '1.25.2', true],
    ['1.25.1', '1.25.2', false],
    ['1.24.99', '1.25.2', false],
    ['1.25', '1.25.2', false],
    ['', '1.25.2', false],
  ])('GIVEN %s WHEN held to %s THEN %s', (version, minimum, expected) => {
    expect(versionAtLeast(version, minimum)).toBe(expected);
  });
});
