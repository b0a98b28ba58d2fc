/**
 * The PgBouncer engine's packages object: which Debian packages it holds (resolved from a Packages
 * index against what every Debian image has), AWS's SSM Agent in it (checked as a Debian arm64 package
 * of that name, its signature against AWS's pinned key), its layout as the hosts' bootstrap reads it (the
 * same `sha256sum --check --strict SHA256SUMS`), and the real build against Debian 13's arm64 archive.
 * The agent here is a package built by the test (this machine cannot reach AWS), passed as SSM_AGENT_DEB.
 */
import { execFileSync, spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { bootstrapFiles } from '../../../lib/model/pgbouncer-bootstrap';
import { HOST_AGENT_PACKAGE_FILE, hostAgentSha256 } from '../../../lib/model/pgbouncer-host-agent';
import { buildRehearsalPgBouncer, checkSameBuild, readDebBuild, readRehearsalBuild } from '../../../lib/packaging/pgbouncer-build';
import { PoolerPackagesError, ROOT, parseDebianIndex, poolerPackagesFile, resolvePoolerPackages, withKitPackage, writePoolerPackagesTar } from '../../../lib/packaging/pooler-packages';
import { SSM_AGENT_SIGNER, SSM_AGENT_SIGNER_FINGERPRINT, checkSsmAgentDeb, dearmorPublicKey, verifySsmAgentSignature } from '../../../lib/packaging/ssm-agent';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBstandin\n-----END CERTIFICATE-----\n';
const AGENT_VERSION = '3.3.9999.0-1';

/** A tiny Debian package built here (dpkg-deb --build): by default, one standing in for AWS's SSM Agent for arm64. */
function fixtureDeb(dir: string, fields: { package?: string; architecture?: string } = {}): string {
  const name = fields.package ?? 'amazon-ssm-agent';
  const architecture = fields.architecture ?? 'arm64';
  const root = fs.mkdtempSync(path.join(dir, 'deb-root-'));
  fs.mkdirSync(path.join(root, 'DEBIAN'));
  fs.mkdirSync(path.join(root, 'usr', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(root, 'DEBIAN', 'control'), [`Package: ${name}`, `Version: ${AGENT_VERSION}`, `Architecture: ${architecture}`, 'Maintainer: Fixture <fixture@example.invalid>', 'Description: a package built by the test', ''].join('\n'));
  fs.writeFileSync(path.join(root, 'usr', 'bin', name), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const deb = path.join(dir, `${name}-${architecture}.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, deb], { stdio: 'ignore' });
  fs.rmSync(root, { recursive: true, force: true });
  return deb;
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The build command, as `make pooler-packages` runs it (`args` before the output file, e.g. --arch). */
function build(out: string, env: Record<string, string>, args: string[] = []) {
  return spawnSync(process.execPath, [require.resolve('ts-node/dist/bin'), '--transpile-only', path.join(ROOT, 'bin', 'build-pooler-packages.ts'), ...args, out], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
}

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

  test('GIVEN the kit\'s PgBouncer package in place of the index\'s WHEN resolved THEN its dependencies count, and the kit\'s stanza is the one resolved', () => {
    const stanzas = parseDebianIndex(index(['libc6', 'required'], ['pgbouncer', 'optional', 'libc6'], ['libpam0g', 'optional', 'libc6']));
    const kit = parseDebianIndex('Package: pgbouncer\nVersion: 1.0-1+apk1\nDepends: libc6, libpam0g\n')[0]!;
    // WHEN
    const resolved = resolvePoolerPackages(withKitPackage(stanzas, kit));
    // THEN
    expect(resolved.map((s) => `${s.Package}=${s.Version}`)).toEqual(['libpam0g=1.0-1', 'pgbouncer=1.0-1+apk1']);
    expect(resolved).toContain(kit);
    expect(resolvePoolerPackages(stanzas).map((s) => s.Package)).toEqual(['pgbouncer']);
  });

  test('GIVEN a dependency no package is or provides WHEN resolved THEN it fails naming it', () => {
    const stanzas = parseDebianIndex(index(['pgbouncer', 'optional', 'libmissing1']));
    expect(() => resolvePoolerPackages(stanzas)).toThrow(new PoolerPackagesError('no package is or provides libmissing1 in the index'));
  });
});

describe('writePoolerPackagesTar', () => {
  let dir: string;
  let agent: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pooler-packages-'));
    fs.writeFileSync(path.join(dir, 'pgbouncer_1.24.1_arm64.deb'), 'deb one');
    fs.writeFileSync(path.join(dir, 'libcares2_1.34_arm64.deb'), 'deb two');
    fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
    agent = fixtureDeb(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const debs = () => ['pgbouncer_1.24.1_arm64.deb', 'libcares2_1.34_arm64.deb'].map((f) => path.join(dir, f));

  test('GIVEN packages, the SSM Agent and the CA bundle WHEN written THEN the tar holds them (the agent named as apt names packages), the host agent the user data pins, and SHA256SUMS, which the bootstrap\'s check accepts, and the same inputs give the same bytes', () => {
    // WHEN
    writePoolerPackagesTar(debs(), agent, path.join(dir, 'ca.pem'), path.join(dir, 'out', 'a.tar'));
    writePoolerPackagesTar(debs(), agent, path.join(dir, 'ca.pem'), path.join(dir, 'out', 'b.tar'));
    // THEN
    expect(execFileSync('tar', ['-tf', path.join(dir, 'out', 'a.tar')], { encoding: 'utf8' }).trim().split('\n')).toEqual([
      'SHA256SUMS',
      `amazon-ssm-agent_${AGENT_VERSION}_arm64.deb`,
      'apk-host',
      'libcares2_1.34_arm64.deb',
      'pgbouncer_1.24.1_arm64.deb',
      'rds-ca-bundle.pem',
    ]);
    expect(fs.readFileSync(path.join(dir, 'out', 'a.tar')).equals(fs.readFileSync(path.join(dir, 'out', 'b.tar')))).toBe(true);
    const x = path.join(dir, 'x');
    fs.mkdirSync(x);
    execFileSync('tar', ['-xf', path.join(dir, 'out', 'a.tar'), '-C', x]);
    expect(fs.readFileSync(path.join(x, 'SHA256SUMS'), 'utf8')).toContain(`${sha256(agent)}  amazon-ssm-agent_${AGENT_VERSION}_arm64.deb\n`);
    expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).toBe(0);
    // The host agent is the one whose SHA-256 the user data pins, executable.
    expect(sha256(path.join(x, HOST_AGENT_PACKAGE_FILE))).toBe(hostAgentSha256());
    expect(fs.statSync(path.join(x, HOST_AGENT_PACKAGE_FILE)).mode & 0o111).not.toBe(0);
    // The user data's pin (the bootstrap runs `sha256sum --check --strict` on it in the unpacked object) passes.
    const pin = bootstrapFiles().find((f) => f.name === `${HOST_AGENT_PACKAGE_FILE}.sha256`)!;
    fs.writeFileSync(path.join(dir, 'pin'), pin.content);
    expect(spawnSync('sha256sum', ['--check', '--strict', path.join(dir, 'pin')], { cwd: x }).status).toBe(0);
    // a package changed after the sums were written fails the hosts' check
    fs.appendFileSync(path.join(x, 'pgbouncer_1.24.1_arm64.deb'), 'tampered');
    expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).not.toBe(0);
  });

  test('GIVEN a CA bundle without a certificate WHEN written THEN it fails naming the file and the bundle to give', () => {
    fs.writeFileSync(path.join(dir, 'ca.pem'), '<html>not found</html>');
    expect(() => writePoolerPackagesTar(debs(), agent, path.join(dir, 'ca.pem'), path.join(dir, 'out.tar'))).toThrow(/ca\.pem holds no PEM certificate: give the RDS CA bundle \(https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem\)/);
  });

  test('GIVEN amd64 WHEN written THEN it takes the SSM Agent for amd64 and refuses the one for arm64', () => {
    const amd64 = fixtureDeb(dir, { architecture: 'amd64' });
    writePoolerPackagesTar(debs(), amd64, path.join(dir, 'ca.pem'), path.join(dir, 'out', 'amd64.tar'), 'amd64');
    expect(execFileSync('tar', ['-tf', path.join(dir, 'out', 'amd64.tar')], { encoding: 'utf8' })).toContain(`amazon-ssm-agent_${AGENT_VERSION}_amd64.deb\n`);
    expect(() => writePoolerPackagesTar(debs(), agent, path.join(dir, 'ca.pem'), path.join(dir, 'out', 'arm64-agent.tar'), 'amd64')).toThrow(
      /is the package amazon-ssm-agent for arm64, not amazon-ssm-agent for amd64: give AWS's SSM Agent for Debian amd64 \(https:\/\/s3\.<region>\.amazonaws\.com\/amazon-ssm-<region>\/latest\/debian_amd64\/amazon-ssm-agent\.deb\)/,
    );
    expect(poolerPackagesFile('amd64')).toBe(path.join(ROOT, 'dist', 'pooler-packages', 'debian-13-amd64.tar'));
  });

  test('GIVEN an SSM Agent that is another package WHEN written THEN it fails and writes nothing', () => {
    expect(() => writePoolerPackagesTar(debs(), fixtureDeb(dir, { package: 'pgbouncer' }), path.join(dir, 'ca.pem'), path.join(dir, 'out', 'c.tar'))).toThrow(PoolerPackagesError);
    expect(fs.existsSync(path.join(dir, 'out', 'c.tar'))).toBe(false);
  });
});

describe('checkSsmAgentDeb', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-ssm-agent-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('GIVEN amazon-ssm-agent for arm64 WHEN checked THEN its fields', () => {
    expect(checkSsmAgentDeb(fixtureDeb(dir))).toEqual({ package: 'amazon-ssm-agent', version: AGENT_VERSION, architecture: 'arm64' });
  });

  const give = "give AWS's SSM Agent for Debian arm64 (https://s3.<region>.amazonaws.com/amazon-ssm-<region>/latest/debian_arm64/amazon-ssm-agent.deb)";
  test.each([
    ['not a Debian package', () => { fs.writeFileSync(path.join(dir, 'page.deb'), '<Error><Code>AccessDenied</Code></Error>'); return path.join(dir, 'page.deb'); }, /page\.deb is not a Debian package \(dpkg-deb: .+\): /],
    ['the agent for amd64', () => fixtureDeb(dir, { architecture: 'amd64' }), /amazon-ssm-agent-amd64\.deb is the package amazon-ssm-agent for amd64, not amazon-ssm-agent for arm64: /],
    ['another package', () => fixtureDeb(dir, { package: 'ssm-agent-lookalike' }), /ssm-agent-lookalike-arm64\.deb is the package ssm-agent-lookalike for arm64, not amazon-ssm-agent for arm64: /],
  ])('GIVEN %s WHEN checked THEN it is refused naming the file, what it is and the package to give', (_, file, message) => {
    const f = file();
    expect(() => checkSsmAgentDeb(f)).toThrow(PoolerPackagesError);
    expect(() => checkSsmAgentDeb(f)).toThrow(message);
    expect(() => checkSsmAgentDeb(f)).toThrow(give);
  });
});

describe('verifySsmAgentSignature', () => {
  // A signer of the test's own (gpg, a fresh home): AWS's private key is AWS's, so a good signature is the test's.
  let dir: string;
  let home: string;
  let signer: { key: string; fingerprint: string };
  let agent: string;
  const gpg = (...args: string[]) => execFileSync('gpg', ['--homedir', home, '--batch', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-ssm-agent-sig-'));
    home = path.join(dir, 'gnupg');
    fs.mkdirSync(home, { mode: 0o700 });
    gpg('--passphrase', '', '--quick-gen-key', 'Fixture signer <fixture@example.invalid>', 'ed25519', 'sign', 'never');
    signer = { key: gpg('--armor', '--export'), fingerprint: /^fpr:+([0-9A-F]{40}):/m.exec(gpg('--with-colons', '--list-keys'))![1]! };
    agent = fixtureDeb(dir);
    gpg('--detach-sign', '--output', `${agent}.sig`, agent);
  });
  afterAll(() => {
    // the agent gpg started for the key and the signature
    spawnSync('gpgconf', ['--homedir', home, '--kill', 'all']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('GIVEN AWS\'s pinned key WHEN read THEN its armor checksum holds and its primary key has the pinned fingerprint and AWS\'s signer user id', () => {
    const key = dearmorPublicKey(SSM_AGENT_SIGNER.key);
    // a version 4 public key packet in the old format with a two-byte length (0x99): fingerprint = SHA-1 of 0x99, length, body (RFC 4880, 12.2)
    expect(key[0]).toBe(0x99);
    const packet = key.subarray(0, 3 + key.readUInt16BE(1));
    expect(createHash('sha1').update(packet).digest('hex').toUpperCase()).toBe(SSM_AGENT_SIGNER_FINGERPRINT);
    expect(key.toString('latin1')).toContain('SSM Agent <ssm-agent-signer@amazon.com>');
    // one character off in the key fails its checksum
    expect(() => dearmorPublicKey(SSM_AGENT_SIGNER.key.replace('mQINBGohhG8B', 'mQINBGohhG9B'))).toThrow('the signer\'s key fails its armor checksum');
  });

  test('GIVEN a package and its signer\'s signature WHEN verified against that signer THEN it passes', () => {
    expect(() => verifySsmAgentSignature(agent, `${agent}.sig`, signer)).not.toThrow();
  });

  test('GIVEN a package changed after it was signed WHEN verified THEN it is refused', () => {
    const changed = path.join(dir, 'changed.deb');
    fs.writeFileSync(changed, Buffer.concat([fs.readFileSync(agent), Buffer.from('tampered')]));
    expect(() => verifySsmAgentSignature(changed, `${agent}.sig`, signer)).toThrow(/changed\.deb fails its signature .*amazon-ssm-agent-arm64\.deb\.sig: /);
  });

  test('GIVEN a package signed by a key other than AWS\'s WHEN verified against AWS\'s pinned key THEN it is refused naming both keys', () => {
    expect(() => verifySsmAgentSignature(agent, `${agent}.sig`)).toThrow(new RegExp(`signed by key ${signer.fingerprint.slice(-16)}, not by ${SSM_AGENT_SIGNER_FINGERPRINT} \\(if AWS has published a new key`));
  });

  test('GIVEN the signer\'s key but another pinned fingerprint WHEN verified THEN it is refused', () => {
    expect(() => verifySsmAgentSignature(agent, `${agent}.sig`, { key: signer.key, fingerprint: SSM_AGENT_SIGNER_FINGERPRINT })).toThrow(PoolerPackagesError);
  });

  test('GIVEN something not a signature WHEN verified THEN it is refused', () => {
    fs.writeFileSync(path.join(dir, 'page.sig'), '<Error><Code>NoSuchKey</Code></Error>');
    expect(() => verifySsmAgentSignature(agent, path.join(dir, 'page.sig'), signer)).toThrow(/fails its signature/);
  });
});

describe('make pooler-packages refuses an SSM Agent before it reaches Debian\'s archive', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pooler-packages-refuse-'));
    fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['a file that is not a Debian package', () => { fs.writeFileSync(path.join(dir, 'amazon-ssm-agent.deb'), 'not a package'); return path.join(dir, 'amazon-ssm-agent.deb'); }, /amazon-ssm-agent\.deb is not a Debian package \(dpkg-deb: /],
    ['the agent for amd64', () => fixtureDeb(dir, { architecture: 'amd64' }), /is the package amazon-ssm-agent for amd64, not amazon-ssm-agent for arm64: give AWS's SSM Agent for Debian arm64 \(https:\/\/s3\.<region>\.amazonaws\.com\/amazon-ssm-<region>\/latest\/debian_arm64\/amazon-ssm-agent\.deb\)/],
    ['another package for arm64', () => fixtureDeb(dir, { package: 'pgbouncer' }), /is the package pgbouncer for arm64, not amazon-ssm-agent for arm64: /],
    ['the agent with a .sig not by AWS\'s key', () => { const deb = fixtureDeb(dir); fs.writeFileSync(`${deb}.sig`, 'not a signature'); return deb; }, /amazon-ssm-agent-arm64\.deb fails its signature /],
  ])('GIVEN SSM_AGENT_DEB=%s WHEN built THEN it fails with the reason and never reaches apt', (_, file, message) => {
    const out = path.join(fs.mkdtempSync(path.join(dir, 'out-')), 'packages.tar');
    // WHEN
    const run = build(out, { RDS_CA_BUNDLE: path.join(dir, 'ca.pem'), SSM_AGENT_DEB: file() });
    // THEN
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain('apt-get update');
    expect(fs.existsSync(out)).toBe(false);
  });

  test('GIVEN an architecture the kit does not build for WHEN built THEN it fails naming it before anything is read', () => {
    const out = path.join(fs.mkdtempSync(path.join(dir, 'out-')), 'packages.tar');
    const run = build(out, { RDS_CA_BUNDLE: path.join(dir, 'ca.pem'), SSM_AGENT_DEB: fixtureDeb(dir) }, ['--arch', 'armhf']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--arch: architecture 'armhf' is not one the kit builds PgBouncer for: give arm64 or amd64 (arm64 for the hosts)");
    expect(run.stderr).not.toContain('apt-get update');
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('make pooler-packages against Debian 13\'s arm64 archive', () => {
  test('GIVEN the archive WHEN built THEN the object holds the kit\'s PgBouncer 1.25.2 for arm64, the rehearsal\'s build, the libraries it needs and the SSM Agent given, and passes the hosts\' check', () => {
    // GIVEN stand-ins for the RDS CA bundle and the SSM Agent (AWS is not reachable from every build machine)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pooler-packages-live-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
      const agent = fixtureDeb(dir);
      const out = path.join(dir, 'packages.tar');
      // WHEN
      const run = build(out, { RDS_CA_BUNDLE: path.join(dir, 'ca.pem'), SSM_AGENT_DEB: agent });
      expect(run.stderr).toContain(`SSM Agent ${AGENT_VERSION}: no amazon-ssm-agent-arm64.deb.sig beside it, so its signature is not checked`);
      expect(run.status).toBe(0);
      // THEN
      const x = path.join(dir, 'x');
      fs.mkdirSync(x);
      execFileSync('tar', ['-xf', out, '-C', x]);
      expect(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: x }).status).toBe(0);
      const fields = (deb: string) => execFileSync('dpkg-deb', ['-f', path.join(x, deb), 'Package', 'Version', 'Architecture'], { encoding: 'utf8' });
      const debs = fs.readdirSync(x).filter((f) => f.endsWith('.deb'));
      const pgbouncer = debs.find((f) => f.startsWith('pgbouncer_'))!;
      expect(fields(pgbouncer)).toMatch(/^Package: pgbouncer\nVersion: 1\.25\.\d+-0\+apk\d+\nArchitecture: arm64\n$/);
      // the kit's package, of the rehearsal's source and patches (not Debian's unpatched one)
      buildRehearsalPgBouncer();
      expect(() => checkSameBuild(readRehearsalBuild(), readDebBuild(path.join(x, pgbouncer)), 'arm64')).not.toThrow();
      expect(debs.map((f) => f.split('_')[0])).toEqual(expect.arrayContaining(['libcares2', 'libevent-2.1-7t64', 'postgresql-common']));
      // nothing every Debian image has (its required packages)
      expect(debs.map((f) => f.split('_')[0])).not.toEqual(expect.arrayContaining(['libc6']));
      // the agent given, byte for byte, and in the sums the hosts check
      expect(fs.readFileSync(path.join(x, `amazon-ssm-agent_${AGENT_VERSION}_arm64.deb`)).equals(fs.readFileSync(agent))).toBe(true);
      expect(fs.readFileSync(path.join(x, 'SHA256SUMS'), 'utf8')).toContain(`${sha256(agent)}  amazon-ssm-agent_${AGENT_VERSION}_arm64.deb\n`);
      expect(fs.readFileSync(path.join(x, 'rds-ca-bundle.pem'), 'utf8')).toBe(PEM);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
