#!/usr/bin/env node
/**
 * Builds the PgBouncer engine's packages object (lib/packaging/pooler-packages.ts):
 * dist/pooler-packages/debian-13-<arch>.tar, to upload where PgBouncerPackages (the reference app's
 * `PoolerPackages` output, Terraform's packages_bucket/packages_key) points.
 *
 *   npx ts-node --transpile-only bin/build-pooler-packages.ts [--arch arm64|amd64] [--rehearsal] [outFile]
 *
 * --rehearsal: the object the rehearsal's booted hosts install: its CA as the RDS bundle (RDS_CA_BUNDLE) and the
 * kit's stand-in package in place of AWS's SSM Agent (ssm-agent.ts); the rest as the hosts' is built.
 * --arch: the hosts' arm64 unless given (amd64 for a rehearsal of booted Debian 13 hosts). PgBouncer is the
 * kit's package (tools/build-pgbouncer.sh --deb <arch>: the rehearsal's source and patches, built for the
 * architecture; minutes the first time, then cached under .cache/pgbouncer-deb), the rest is Debian's.
 * Needs Debian's mirror (DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR), the RDS CA bundle: RDS_CA_BUNDLE=<file>,
 * else it is downloaded from AWS's trust store, and AWS's SSM Agent for Debian <arch>: SSM_AGENT_DEB=<file>
 * (checked against <file>.sig where that is beside it), else it is downloaded from the amazon-ssm-<region>
 * bucket of AWS_REGION (default us-east-1) with its .sig, and the signature checked against AWS's pinned key.
 * Both are read before Debian's archive, so a missing or wrong one fails at once.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { withFileLock } from '../lib/private/file-lock';
import { buildPgBouncerDeb, checkArchitecture, checkDebBuild, readDebBuild } from '../lib/packaging/pgbouncer-build';
import {
  PoolerPackagesError,
  RDS_CA_BUNDLE_URL,
  ROOT,
  parseDebianIndex,
  poolerPackagesFile,
  resolvePoolerPackages,
  withKitPackage,
  writePoolerPackagesTar,
} from '../lib/packaging/pooler-packages';
import { SSM_AGENT_DEFAULT_REGION, buildSsmAgentStandIn, checkSsmAgentDeb, ssmAgentDebUrl, verifySsmAgentSignature } from '../lib/packaging/ssm-agent';

const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
const mirror = process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const security = process.env.DEBIAN_SECURITY_MIRROR ?? 'http://deb.debian.org/debian-security';
const log = (line: string) => process.stderr.write(`build-pooler-packages: ${line}\n`);

/** `[--arch arm64|amd64] [--rehearsal] [outFile]`. */
function parseArgs(argv: ReadonlyArray<string>): { arch: string; rehearsal: boolean; outFile?: string } {
  let arch = 'arm64';
  let rehearsal = false;
  let outFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--arch') arch = argv[++i] ?? '';
    else if (arg.startsWith('--arch=')) arch = arg.slice('--arch='.length);
    else if (arg === '--rehearsal') rehearsal = true;
    else if (arg.startsWith('-') || outFile !== undefined) {
      process.stderr.write(`build-pooler-packages: unknown argument '${arg}': give [--arch arm64|amd64] [--rehearsal] [outFile]\n`);
      process.exit(2);
    } else outFile = arg;
  }
  return { arch, rehearsal, outFile };
}

const args = parseArgs(process.argv.slice(2));
let arch: ReturnType<typeof checkArchitecture>;
try {
  arch = checkArchitecture(args.arch);
} catch (err) {
  process.stderr.write(`build-pooler-packages: --arch: ${(err as Error).message}\n`);
  process.exit(2);
}
const outFile = path.resolve(args.outFile ?? poolerPackagesFile(arch));
const work = path.join(ROOT, '.cache', 'pooler-packages', arch);

/** apt with a sources list, state and cache of its own, for the architecture only. */
function apt(command: 'apt-get' | 'apt-cache', args: string[], cwd = work): string {
  const options = {
    'Dir::Etc::SourceList': path.join(work, 'sources.list'),
    'Dir::Etc::SourceParts': '/dev/null',
    'Dir::State::Lists': path.join(work, 'lists'),
    'Dir::State::status': path.join(work, 'status'),
    'Dir::Cache': path.join(work, 'cache'),
    'APT::Architecture': arch,
    'APT::Architectures': arch,
    // The build's own lock (withFileLock below) serialises builds; apt's would fail a second one at once.
    'Debug::NoLocking': '1',
    // The downloads go to the project's own directory, which apt's _apt user may not write.
    'APT::Sandbox::User': 'root',
  };
  return execFileSync(command, [...Object.entries(options).flatMap(([k, v]) => ['-o', `${k}=${v}`]), ...args], { cwd, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] });
}

function caBundle(): string {
  if (process.env.RDS_CA_BUNDLE) return path.resolve(process.env.RDS_CA_BUNDLE);
  const file = path.join(work, 'rds-ca-bundle.pem');
  try {
    execFileSync('curl', ['--fail', '--silent', '--show-error', '--max-time', '60', '--output', file, RDS_CA_BUNDLE_URL], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    throw new PoolerPackagesError(`cannot download ${RDS_CA_BUNDLE_URL}: download it where it is reachable and set RDS_CA_BUNDLE=<its path>`);
  }
  return file;
}

/** AWS's SSM Agent for Debian of the architecture: SSM_AGENT_DEB, or downloaded with its signature and checked as AWS documents. */
function ssmAgentDeb(): string {
  const given = process.env.SSM_AGENT_DEB;
  const file = given ? path.resolve(given) : path.join(work, 'amazon-ssm-agent.deb');
  if (!given) {
    const url = ssmAgentDebUrl(process.env.AWS_REGION || SSM_AGENT_DEFAULT_REGION, arch);
    try {
      for (const suffix of ['', '.sig']) {
        execFileSync('curl', ['--fail', '--silent', '--show-error', '--max-time', '300', '--output', `${file}${suffix}`, `${url}${suffix}`], { stdio: ['ignore', 'ignore', 'inherit'] });
      }
    } catch {
      throw new PoolerPackagesError(`cannot download ${url}: download it (and its .sig beside it) where it is reachable and set SSM_AGENT_DEB=<its path>`);
    }
  }
  // A download is always checked against AWS's key; a given file where its .sig is beside it.
  const signed = !given || fs.existsSync(`${file}.sig`);
  if (signed) verifySsmAgentSignature(file, `${file}.sig`);
  const { version } = checkSsmAgentDeb(file, arch);
  log(`SSM Agent ${version}: ${signed ? 'signed by AWS\'s key' : `no ${path.basename(file)}.sig beside it, so its signature is not checked (taken as given)`}`);
  return file;
}

/** The build, in the work directory it has to itself (see below). */
function build(): void {
  for (const dir of ['lists/partial', 'cache/archives/partial', 'debs']) fs.mkdirSync(path.join(work, dir), { recursive: true });
  // The rehearsal's object: its CA as the RDS bundle (RDS_CA_BUNDLE, required) and the kit's stand-in for
  // the agent; everything else as the hosts' is built.
  if (args.rehearsal && !process.env.RDS_CA_BUNDLE) throw new PoolerPackagesError('--rehearsal takes the rehearsal CA as RDS_CA_BUNDLE=<file>');
  const inputs = { caBundle: caBundle(), ssmAgentDeb: args.rehearsal ? buildSsmAgentStandIn(work, arch) : ssmAgentDeb() };
  if (!fs.existsSync(KEYRING)) throw new PoolerPackagesError(`${KEYRING} is missing: install debian-archive-keyring (apt checks Debian's signatures with it)`);
  fs.writeFileSync(
    path.join(work, 'sources.list'),
    [`${mirror} trixie main`, `${mirror} trixie-updates main`, `${security} trixie-security main`].map((s) => `deb [arch=${arch} signed-by=${KEYRING}] ${s}\n`).join(''),
  );
  // The kit's PgBouncer, checked to be of the repository's patches and for the architecture.
  log(`the kit's PgBouncer package for ${arch} (tools/build-pgbouncer.sh --deb ${arch})`);
  const kitDeb = buildPgBouncerDeb(arch);
  checkDebBuild(readDebBuild(kitDeb), arch);
  const kit = parseDebianIndex(execFileSync('dpkg-deb', ['--field', kitDeb], { encoding: 'utf8' }))[0]!;
  log(`${path.basename(kitDeb)}: ${kit.Source}, patches ${kit['X-Apk-Patches']}`);
  // Nothing installed: the baseline of a Debian image is computed from the index (BASELINE_PRIORITIES).
  fs.writeFileSync(path.join(work, 'status'), '');
  log(`apt-get update (Debian 13 ${arch})`);
  apt('apt-get', ['update', '-qq']);
  // The candidates apt would install, one stanza per package (the newest of the three suites), with the
  // kit's PgBouncer in place of Debian's: its dependencies are the ones that count.
  const packages = resolvePoolerPackages(withKitPackage(parseDebianIndex(apt('apt-cache', ['dumpavail'])), kit));
  log(`${packages.length} packages: ${packages.map((p) => `${p.Package}=${p.Version}`).join(' ')}`);
  if (!packages.includes(kit)) throw new PoolerPackagesError(`the resolved packages leave out the kit's ${kit.Package}`);
  const fromDebian = packages.filter((p) => p !== kit);
  const debs = path.join(work, 'debs');
  for (const f of fs.readdirSync(debs)) fs.rmSync(path.join(debs, f));
  apt('apt-get', ['download', '-qq', ...fromDebian.map((p) => `${p.Package}=${p.Version}`)], debs);
  const files = fs.readdirSync(debs).filter((f) => f.endsWith('.deb')).map((f) => path.join(debs, f));
  if (files.length !== fromDebian.length) throw new PoolerPackagesError(`apt-get download gave ${files.length} packages of ${fromDebian.length}`);
  writePoolerPackagesTar([...files, kitDeb], inputs.ssmAgentDeb, inputs.caBundle, outFile, arch, { ssmAgentStandIn: args.rehearsal });
  process.stdout.write(`${path.relative(ROOT, outFile)} ${fs.statSync(outFile).size} bytes\n`);
}

// One build per architecture at a time: apt's lists, cache and the debs directory are the work directory's,
// and two rehearsals starting hosts at once would otherwise update the same lists under each other.
const BUILD_WAIT_MS = 30 * 60_000;
withFileLock(`${work}.lock`, BUILD_WAIT_MS, (file, ms) => `another build of the ${arch} packages held ${file} for more than ${ms / 60_000} minutes: wait for it, or find it with \`fuser ${file}\``, async () => build()).catch((err: Error) => {
  process.stderr.write(`build-pooler-packages: ${err.message}\n`);
  process.exit(1);
});
