/**
 * The PgBouncer engine's packages object: which Debian packages it holds (resolved from a Packages
 * index against what every Debian image has), its layout as the hosts' bootstrap reads it (the same
 * `sha256sum --check --strict SHA256SUMS`), and the real build against Debian 13's arm64 archive.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PoolerPackagesError, ROOT, parseDebianIndex, resolvePoolerPackages, writePoolerPackagesTar } from '../../lib/packaging/pooler-packages';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBstandin\n-----END CERTIFICATE-----\n';

/** A Packages index of the stanzas given as [name, priority, depends, provides]. */
function index(...stanzas: Array<[string, string, string?, string?]>): string {
  return stanzas
    .map(([name, priority, depends, provides]) => [`Package: ${name}`, 'Version: 1.0-1', `Priority: ${priority}`, depends ? `Depends: ${depends}` : '', provides ? `Provides: ${provides}` : '', 'Description: a package\n continued line'].filter((l) => l !== '').join('\n'))
    .join('\n\n');
}

describe('resolvePoolerPackages', () => {
  test('GIVEN an index WHEN resolved THEN PgBouncer and what it needs beyond a Debian image\'s baseline, alternatives and virtual packages met once', () => {
    const stanzas = parseDebianIndex(
      index(
        ['libc6', 'required'],
        ['base-files', 'required', 'libc6, libbase (>= 2)'],
        ['libbase', 'optional', 'libc6'],
        ['adduser', 'important', 'passwd | shadow-utils'],
        ['passwd', 'required', 'libc6'],
        ['pgbouncer', 'optional', 'libc6 (>= 2.38), libevent-2.1-7t64, libssl3t64 | libssl-alt, postgresql-common (>= 26), libbase:any'],
        ['libevent-2.1-7t64', 'optional', 'libc6'],
        ['libssl3t64', 'optional', 'libc6'],
        ['postgresql-common', 'optional', 'adduser, perl-api'],
        ['perl', 'standard', 'libc6', 'perl-api'],
      ),
    );
    expect(resolvePoolerPackages(stanzas).map((s) => s.Package)).toEqual(['libevent-2.1-7t64', 'libssl3t64', 'perl', 'pgbouncer', 'postgresql-common']);
  });

  test('GIVEN a dependency no package is or provides WHEN resolved THEN it fails naming it', () => {
    const stanzas = parseDebianIndex(index(['pgbouncer', 'optional', 'libmissing1']));
    expect(() => resolvePoolerPackages(stanzas)).toThrow(new PoolerPackagesError('no package is or provides libmissing1 in the index'));
  });
});

describe('writePoolerPackagesTar', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pooler-packages-'));
    fs.writeFileSync(path.join(dir, 'pgbouncer_1.24.1_arm64.deb'), 'deb one');
    fs.writeFileSync(path.join(dir, 'libcares2_1.34_arm64.deb'), 'deb two');
    fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const debs = () => ['pgbouncer_1.24.1_arm64.deb', 'libcares2_1.34_arm64.deb'].map((f) => path.join(dir, f));

  test('GIVEN packages and the CA bundle WHEN written THEN the tar holds them and SHA256SUMS, which the bootstrap\'s check accepts, and the same inputs give the same bytes', () => {
    // WHEN
    writePoolerPackagesTar(debs(), path.join(dir, 'ca.pem'), path.join(dir, 'out', 'a.tar'));
    writePoolerPackagesTar(debs(), path.join(dir, 'ca.pem'), path.join(dir, 'out', 'b.tar'));
    // THEN
    expect(execFileSync('tar', ['-tf', path.join(dir, 'out', 'a.tar')], { encoding: 'utf8' }).trim().split('\n')).toEqual(['SHA256SUMS', 'libcares2_1.34_arm64.deb', 'pgbouncer_1.24.1_arm64.deb', 'rds-ca-bundle.pem']);
    expect(fs.readFileSync(path.join(dir, 'out', 'a.tar')).equals(fs.readFileSync(path.join(dir, 'out', 'b.tar')))).toBe(true);
    const x = path.join(dir, 'x');
    fs.mkdirSync(x);
    execFileSync('tar', ['-xf', path.join(dir, 'out', 'a.tar'), '-C', x]);
    expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).toBe(0);
    // a package changed after the sums were written fails the hosts' check
    fs.appendFileSync(path.join(x, 'pgbouncer_1.24.1_arm64.deb'), 'tampered');
    expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).not.toBe(0);
  });

  test('GIVEN a CA bundle without a certificate WHEN written THEN it fails naming the file and the bundle to give', () => {
    fs.writeFileSync(path.join(dir, 'ca.pem'), '<html>not found</html>');
    expect(() => writePoolerPackagesTar(debs(), path.join(dir, 'ca.pem'), path.join(dir, 'out.tar'))).toThrow(/ca\.pem holds no PEM certificate: give the RDS CA bundle \(https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem\)/);
  });
});

describe('make pooler-packages against Debian 13\'s arm64 archive', () => {
  test('GIVEN the archive WHEN built THEN the object holds PgBouncer 1.24 for arm64 and the libraries it needs, and passes the hosts\' check', () => {
    // GIVEN a stand-in for the RDS CA bundle (AWS's trust store is not reachable from every build machine)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pooler-packages-live-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
      const out = path.join(dir, 'packages.tar');
      // WHEN
      execFileSync(process.execPath, [require.resolve('ts-node/dist/bin'), '--transpile-only', path.join(ROOT, 'bin', 'build-pooler-packages.ts'), out], { env: { ...process.env, RDS_CA_BUNDLE: path.join(dir, 'ca.pem') }, stdio: ['ignore', 'ignore', 'pipe'] });
      // THEN
      const x = path.join(dir, 'x');
      fs.mkdirSync(x);
      execFileSync('tar', ['-xf', out, '-C', x]);
      expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).toBe(0);
      const fields = (deb: string) => execFileSync('dpkg-deb', ['-f', path.join(x, deb), 'Package', 'Version', 'Architecture'], { encoding: 'utf8' });
      const debs = fs.readdirSync(x).filter((f) => f.endsWith('.deb'));
      const pgbouncer = debs.find((f) => f.startsWith('pgbouncer_'))!;
      expect(fields(pgbouncer)).toMatch(/^Package: pgbouncer\nVersion: 1\.24\.\d+-\S+\nArchitecture: arm64\n$/);
      expect(debs.map((f) => f.split('_')[0])).toEqual(expect.arrayContaining(['libcares2', 'libevent-2.1-7t64', 'postgresql-common']));
      // nothing every Debian image has (its required packages)
      expect(debs.map((f) => f.split('_')[0])).not.toEqual(expect.arrayContaining(['libc6']));
      expect(fs.readFileSync(path.join(x, 'rds-ca-bundle.pem'), 'utf8')).toBe(PEM);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
