/**
 * The PgBouncer engine's packages object (PgBouncerPackages): a tar of the Debian 13 (trixie) arm64
 * packages the hosts install at boot (the kit's PgBouncer package, pgbouncer-build.ts, what it needs, and
 * AWS's SSM Agent, ssm-agent.ts), the host agent (apk-host, pinned by its SHA-256 in the user data), their
 * SHA256SUMS and rds-ca-bundle.pem; amd64 for a rehearsal of booted hosts. The data VPC has no route
 * to Debian's mirrors, so the hosts read this object through the S3 gateway endpoint, and the bootstrap's
 * install step checks `sha256sum --check --strict SHA256SUMS` before `dpkg --install *.deb`.
 *
 * Which packages: the kit's PgBouncer package (Debian's, with the binary built by tools/build-pgbouncer.sh
 * from the same source as the rehearsal's, with the same patches) and its dependency closure, less what
 * every Debian image has (the closure of the packages of priority required and important), resolved from
 * trixie's own indexes of the architecture. apt
 * fetches the indexes and the packages with a sources list, state and cache of its own under .cache/,
 * so the machine's apt configuration is never changed; apt checks InRelease's signature (the Debian
 * archive keyring), each index's hash and each package's hash.
 */
import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { HOST_AGENT_PACKAGE_FILE, hostAgentSource } from '../model/pgbouncer-host-agent';
import { PoolerPackagesError } from './pooler-packages-error';
import { SSM_AGENT_ARCHITECTURE, SSM_AGENT_STANDIN_PACKAGE, checkSsmAgentDeb, debianFileName } from './ssm-agent';

export { PoolerPackagesError };
export const ROOT = path.join(__dirname, '..', '..');
/** The packages object for `architecture`: dist/pooler-packages/debian-13-<architecture>.tar. */
export function poolerPackagesFile(architecture: string): string {
  return path.join(ROOT, 'dist', 'pooler-packages', `debian-13-${architecture}.tar`);
}
/** The hosts' (arm64) packages object. */
export const POOLER_PACKAGES_FILE = poolerPackagesFile('arm64');
/** AWS's bundle of every RDS certificate authority, all Regions (Aurora User Guide, UsingWithRDS.SSL). */
export const RDS_CA_BUNDLE_URL = 'https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem';
/** What every Debian image has installed: these priorities and their dependencies. */
export const BASELINE_PRIORITIES = ['required', 'important'] as const;
export const POOLER_PACKAGE_ROOTS = ['pgbouncer'] as const;

/** One stanza of a Debian Packages index: its fields (continuation lines left out). */
export type DebianStanza = Readonly<Record<string, string>>;

export function parseDebianIndex(text: string): DebianStanza[] {
  return text
    .split(/\n\s*\n/)
    .map((stanza) => {
      const fields: Record<string, string> = {};
      for (const line of stanza.split('\n')) {
        if (line === '' || line.startsWith(' ') || line.startsWith('\t')) continue;
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
      }
      return fields;
    })
    .filter((f) => f.Package !== undefined);
}

/**
 * The index with the kit's package in place of the index's stanza of the same name (`kit`: the package's
 * control fields), so the closure follows the dependencies of the package that is shipped.
 */
export function withKitPackage(stanzas: ReadonlyArray<DebianStanza>, kit: DebianStanza): DebianStanza[] {
  if (kit.Package === undefined) throw new PoolerPackagesError('the kit\'s package has no Package field');
  return [...stanzas.filter((s) => s.Package !== kit.Package), kit];
}

/** A dependency field as alternatives of package names (versions and architecture qualifiers dropped). */
function dependencies(stanza: DebianStanza): string[][] {
  return ['Pre-Depends', 'Depends']
    .flatMap((field) => (stanza[field] ?? '').split(','))
    .map((d) => d.trim())
    .filter((d) => d !== '')
    .map((d) => d.split('|').map((alt) => alt.trim().split(/[\s(]/)[0].split(':')[0]));
}

/**
 * The packages to ship: the closure of `roots` less the closure of the baseline priorities. A dependency
 * already met (by a package in either closure, or one providing it) adds nothing; otherwise its first
 * alternative is taken, as apt does without a preference. A name neither in the index nor provided fails.
 */
export function resolvePoolerPackages(stanzas: ReadonlyArray<DebianStanza>, roots: ReadonlyArray<string> = POOLER_PACKAGE_ROOTS): DebianStanza[] {
  const byName = new Map(stanzas.map((s) => [s.Package, s]));
  const providers = new Map<string, string[]>();
  for (const s of stanzas) {
    for (const provided of (s.Provides ?? '').split(',').map((p) => p.trim().split(/[\s(]/)[0]).filter((p) => p !== '')) {
      providers.set(provided, [...(providers.get(provided) ?? []), s.Package]);
    }
  }
  const closure = (start: ReadonlyArray<string>, have: ReadonlySet<string>): Set<string> => {
    const seen = new Set<string>();
    const satisfied = (name: string) => seen.has(name) || have.has(name) || (providers.get(name) ?? []).some((p) => seen.has(p) || have.has(p));
    const pending = [...start];
    while (pending.length > 0) {
      const wanted = pending.pop()!;
      if (satisfied(wanted)) continue;
      const name = byName.has(wanted) ? wanted : providers.get(wanted)?.[0];
      if (name === undefined) throw new PoolerPackagesError(`no package is or provides ${wanted} in the index`);
      if (seen.has(name) || have.has(name)) continue;
      seen.add(name);
      for (const alternatives of dependencies(byName.get(name)!)) {
        if (!alternatives.some(satisfied)) pending.push(alternatives[0]);
      }
    }
    return seen;
  };
  const baseline = closure(stanzas.filter((s) => (BASELINE_PRIORITIES as ReadonlyArray<string>).includes(s.Priority ?? '')).map((s) => s.Package), new Set());
  return [...closure(roots, baseline)].sort().map((name) => byName.get(name)!);
}

/** SHA256SUMS in sha256sum's format, for `files` (base names) in `dir`. */
export function sha256sums(dir: string, files: ReadonlyArray<string>): string {
  return [...files].sort().map((f) => `${createHash('sha256').update(fs.readFileSync(path.join(dir, f))).digest('hex')}  ${f}\n`).join('');
}

/**
 * Writes the packages object: the .deb files, the SSM Agent's (checked by checkSsmAgentDeb for `architecture`,
 * named as apt names packages: AWS publishes it as amazon-ssm-agent.deb), rds-ca-bundle.pem and their
 * SHA256SUMS in one tar, entries sorted, owned by root and dated at the epoch, so the same inputs give the
 * same bytes.
 */
export function writePoolerPackagesTar(debs: ReadonlyArray<string>, ssmAgentDeb: string, caBundle: string, outFile: string, architecture: string = SSM_AGENT_ARCHITECTURE, options: { readonly ssmAgentStandIn?: boolean } = {}): void {
  const pem = fs.readFileSync(caBundle, 'utf8');
  if (!/-----BEGIN CERTIFICATE-----/.test(pem)) throw new PoolerPackagesError(`${caBundle} holds no PEM certificate: give the RDS CA bundle (${RDS_CA_BUNDLE_URL})`);
  // The rehearsal's object carries the kit's stand-in in the agent's place (ssm-agent.ts); the hosts' never does.
  const ssmAgent = options.ssmAgentStandIn === true ? checkSsmAgentStandIn(ssmAgentDeb, architecture) : debianFileName(checkSsmAgentDeb(ssmAgentDeb, architecture));
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  const stage = fs.mkdtempSync(path.join(path.dirname(outFile), '.stage-'));
  try {
    for (const deb of debs) fs.copyFileSync(deb, path.join(stage, path.basename(deb)));
    fs.copyFileSync(ssmAgentDeb, path.join(stage, ssmAgent));
    fs.writeFileSync(path.join(stage, 'rds-ca-bundle.pem'), pem);
    // The host agent: the bootstrap installs it only with the SHA-256 its user data pins.
    fs.writeFileSync(path.join(stage, HOST_AGENT_PACKAGE_FILE), hostAgentSource(), { mode: 0o755 });
    const files = [...debs.map((d) => path.basename(d)), ssmAgent, 'rds-ca-bundle.pem', HOST_AGENT_PACKAGE_FILE];
    fs.writeFileSync(path.join(stage, 'SHA256SUMS'), sha256sums(stage, files));
    execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-cf', outFile, '-C', stage, ...[...files, 'SHA256SUMS'].sort()]);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/** The stand-in's file name, once it is checked to be the kit's stand-in for the architecture. */
function checkSsmAgentStandIn(file: string, architecture: string): string {
  const [name, version, arch] = execFileSync('dpkg-deb', ['--showformat=${Package}\\t${Version}\\t${Architecture}', '--show', file], { encoding: 'utf8' }).split('\t');
  if (name !== SSM_AGENT_STANDIN_PACKAGE || arch !== architecture) throw new PoolerPackagesError(`${file} is ${name} for ${arch}, not the rehearsal's ${SSM_AGENT_STANDIN_PACKAGE} for ${architecture}`);
  return `${name}_${version}_${arch}.deb`;
}
