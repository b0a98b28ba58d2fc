/**
 * The kit's one PgBouncer (tools/build-pgbouncer.sh): upstream PgBouncer 1.25.2, vendored in
 * tools/pgbouncer-src/, plus the patches in tools/pgbouncer-patches/, built for the local rehearsal (this
 * machine) and as a Debian 13 package for the hosts (arm64) or amd64. Both builds record the source and
 * the patch set in the same fields, `Source: pgbouncer (<version>)` and `X-Apk-Patches: <name>=<sha256>,...`:
 * the rehearsal's in .cache/pgbouncer/BUILD-INFO, the package's in its control file. `checkSameBuild`
 * compares them, with the patches in the repository, so the rehearsal and the hosts run the same PgBouncer,
 * and both hold them to PGBOUNCER_MINIMUM_VERSION.
 */
import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PoolerPackagesError } from './pooler-packages-error';

const ROOT = path.join(__dirname, '..', '..');
export const PGBOUNCER_BUILD_SCRIPT = path.join(ROOT, 'tools', 'build-pgbouncer.sh');
export const PGBOUNCER_PATCHES_DIR = path.join(ROOT, 'tools', 'pgbouncer-patches');
/** The rehearsal build's record of its source and patches (written by the script beside bin/pgbouncer). */
export const PGBOUNCER_REHEARSAL_BUILD_INFO = path.join(ROOT, '.cache', 'pgbouncer', 'BUILD-INFO');
/**
 * The oldest PgBouncer the kit builds: 1.25.2 closes CVE-2026-6664 (a pre-authentication crash in SCRAM
 * packet parsing), CVE-2026-6665, CVE-2026-6666 and CVE-2026-6667, and 1.25.1 CVE-2025-12819 (PgBouncer's
 * NEWS.md, 1.25.1 and 1.25.2).
 */
export const PGBOUNCER_MINIMUM_VERSION = '1.25.2';

/** True when dotted version `version` is `minimum` or later (numeric parts compared in order). */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parts = (v: string): number[] => v.split('.').map((n) => Number.parseInt(n, 10));
  const a = parts(version);
  const b = parts(minimum);
  if (a.some(Number.isNaN)) return false;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** The architectures the script packages: the hosts' (Graviton), and amd64 for a rehearsal of booted hosts. */
export const PGBOUNCER_DEB_ARCHITECTURES = ['arm64', 'amd64'] as const;
export type PgBouncerDebArchitecture = (typeof PGBOUNCER_DEB_ARCHITECTURES)[number];

/** ELF e_machine of each architecture's binary (System V ABI; EM_AARCH64 183, EM_X86_64 62). */
const ELF_MACHINE: Readonly<Record<PgBouncerDebArchitecture, number>> = { arm64: 183, amd64: 62 };

/** What a build says about itself: the source it came from and the patches applied to it. */
export interface PgBouncerBuild {
  /** Where it was read from, for messages. */
  readonly from: string;
  /** `pgbouncer (<upstream version>)`. */
  readonly source: string;
  /** `<name>=<sha256>,...`, or `none`. */
  readonly patches: string;
  /** The upstream version the binary reports (`PgBouncer <version>`). */
  readonly version: string;
}

/** The package's build, with what its binary is built for. */
export interface PgBouncerDebBuild extends PgBouncerBuild {
  readonly packageVersion: string;
  readonly architecture: string;
  /** The architecture its /usr/sbin/pgbouncer's ELF header names, or what it is instead. */
  readonly binaryArchitecture: string;
}

export function checkArchitecture(architecture: string): PgBouncerDebArchitecture {
  if (!(PGBOUNCER_DEB_ARCHITECTURES as ReadonlyArray<string>).includes(architecture)) {
    throw new PoolerPackagesError(`architecture '${architecture}' is not one the kit builds PgBouncer for: give ${PGBOUNCER_DEB_ARCHITECTURES.join(' or ')} (arm64 for the hosts)`);
  }
  return architecture as PgBouncerDebArchitecture;
}

/** The patch set as the builds record it: every *.patch in `dir` as name=sha256, in the C locale's order of names. */
export function patchSet(dir: string = PGBOUNCER_PATCHES_DIR): string {
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.patch')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  if (names.length === 0) return 'none';
  return names.map((n) => `${n}=${createHash('sha256').update(fs.readFileSync(path.join(dir, n))).digest('hex')}`).join(',');
}

/** Fields of a Debian control text (continuation lines left out). */
function controlFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (m) fields[m[1]!] = m[2]!.trim();
  }
  return fields;
}

/** The upstream version in `pgbouncer (1.25.2)` (or a Debian source's `pgbouncer (1.24.1-1+deb13u2)`: 1.24.1). */
function upstreamOf(source: string): string {
  return /^pgbouncer \(([^-)]+)/.exec(source)?.[1] ?? '';
}

/** The rehearsal build: its BUILD-INFO and what its binary reports. */
export function readRehearsalBuild(buildInfo: string = PGBOUNCER_REHEARSAL_BUILD_INFO): PgBouncerBuild {
  if (!fs.existsSync(buildInfo)) throw new PoolerPackagesError(`${buildInfo} is missing: build the rehearsal's PgBouncer with \`make pgbouncer\``);
  const fields = controlFields(fs.readFileSync(buildInfo, 'utf8'));
  const binary = path.join(path.dirname(buildInfo), 'bin', 'pgbouncer');
  const reported = execFileSync(binary, ['--version'], { encoding: 'utf8' }).split('\n')[0]!;
  return { from: buildInfo, source: fields.Source ?? '', patches: fields['X-Apk-Patches'] ?? '', version: reported.replace(/^PgBouncer /, '') };
}

/** A package's build: its control fields and the architecture of its binary's ELF header. */
export function readDebBuild(deb: string): PgBouncerDebBuild {
  const fields = controlFields(execFileSync('dpkg-deb', ['--field', deb], { encoding: 'utf8' }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-pgbouncer-deb-'));
  let binaryArchitecture: string;
  try {
    execFileSync('dpkg-deb', ['--extract', deb, dir]);
    const binary = path.join(dir, 'usr', 'sbin', 'pgbouncer');
    const header = fs.existsSync(binary) ? fs.readFileSync(binary).subarray(0, 20) : Buffer.alloc(0);
    const isElf = header.length === 20 && header.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    // e_machine at offset 18, in the byte order EI_DATA (offset 5) names.
    const machine = isElf ? (header[5] === 2 ? header.readUInt16BE(18) : header.readUInt16LE(18)) : undefined;
    binaryArchitecture = !fs.existsSync(binary) ? 'no /usr/sbin/pgbouncer' : machine === undefined ? 'not an ELF file' : (Object.entries(ELF_MACHINE).find(([, m]) => m === machine)?.[0] ?? `ELF machine ${machine}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const source = fields.Source ?? '';
  return { from: deb, source, patches: fields['X-Apk-Patches'] ?? '', version: upstreamOf(source), packageVersion: fields.Version ?? '', architecture: fields.Architecture ?? '', binaryArchitecture };
}

/**
 * What is wrong with the kit's package for `architecture`: a source older than PGBOUNCER_MINIMUM_VERSION or
 * without the kit's version (<source version>-0+apk<N>), patches other than those in `patchesDir`, or a
 * package or binary for another architecture. Empty when nothing is.
 */
export function debBuildProblems(deb: PgBouncerDebBuild, architecture: PgBouncerDebArchitecture, patchesDir: string = PGBOUNCER_PATCHES_DIR): string[] {
  const problems: string[] = [];
  const expected = patchSet(patchesDir);
  if (deb.patches !== expected) problems.push(`${deb.from} has the patches '${deb.patches || '(none recorded)'}', ${patchesDir} '${expected}'`);
  if (deb.architecture !== architecture || deb.binaryArchitecture !== architecture) problems.push(`${deb.from} is for ${deb.architecture || '(no architecture)'} with a binary for ${deb.binaryArchitecture}, not ${architecture}`);
  const sourceVersion = /\((.*)\)/.exec(deb.source)?.[1];
  if (sourceVersion === undefined || !deb.packageVersion.startsWith(`${sourceVersion}-0+apk`)) problems.push(`${deb.from} has the version ${deb.packageVersion || '(none)'} and the source '${deb.source || '(none)'}', not the kit's build of a source (<source version>-0+apk<N>)`);
  else if (!versionAtLeast(deb.version, PGBOUNCER_MINIMUM_VERSION)) problems.push(`${deb.from} is PgBouncer ${deb.version}, older than ${PGBOUNCER_MINIMUM_VERSION} (CVE-2026-6664..6667)`);
  return problems;
}

/** Fails unless `deb` is the kit's package for `architecture` of the patches in `patchesDir` (debBuildProblems). */
export function checkDebBuild(deb: PgBouncerDebBuild, architecture: PgBouncerDebArchitecture, patchesDir: string = PGBOUNCER_PATCHES_DIR): void {
  const problems = debBuildProblems(deb, architecture, patchesDir);
  if (problems.length > 0) throw new PoolerPackagesError(`${problems.join('; ')}: rebuild it with tools/build-pgbouncer.sh --deb ${architecture}`);
}

/**
 * Fails unless the rehearsal's build and the package are built from the same source with the same patches,
 * those in `patchesDir`, the rehearsal's binary reports that source's upstream version, and the package is
 * the kit's for `architecture` (debBuildProblems). The message lists every difference and says how to rebuild.
 */
export function checkSameBuild(rehearsal: PgBouncerBuild, deb: PgBouncerDebBuild, architecture: PgBouncerDebArchitecture, patchesDir: string = PGBOUNCER_PATCHES_DIR): void {
  const problems: string[] = [];
  if (rehearsal.source === '' || rehearsal.source !== deb.source) problems.push(`the source differs: ${rehearsal.from} has '${rehearsal.source}', ${deb.from} '${deb.source}'`);
  if (rehearsal.version !== upstreamOf(rehearsal.source)) problems.push(`the rehearsal's binary reports PgBouncer ${rehearsal.version}, not ${upstreamOf(rehearsal.source) || '(no version)'} of its source '${rehearsal.source}'`);
  const expected = patchSet(patchesDir);
  if (rehearsal.patches !== expected) problems.push(`${rehearsal.from} has the patches '${rehearsal.patches || '(none recorded)'}', ${patchesDir} '${expected}'`);
  problems.push(...debBuildProblems(deb, architecture, patchesDir));
  if (problems.length > 0) {
    throw new PoolerPackagesError(`the rehearsal's PgBouncer and the package's are not the same build: ${problems.join('; ')}. Rebuild both: make pgbouncer and make pooler-packages`);
  }
}

/** Builds (or finds already built) the kit's PgBouncer package for `architecture`; returns the .deb's path. */
export function buildPgBouncerDeb(architecture: PgBouncerDebArchitecture): string {
  const out = execFileSync('bash', [PGBOUNCER_BUILD_SCRIPT, '--deb', architecture], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
  const deb = out.trim().split('\n').pop() ?? '';
  if (!deb.endsWith('.deb') || !fs.existsSync(deb)) throw new PoolerPackagesError(`${PGBOUNCER_BUILD_SCRIPT} --deb ${architecture} printed '${deb}', not a package's path`);
  return deb;
}

/** Builds (or finds already built) the rehearsal's PgBouncer, as `make pgbouncer` does; returns the binary's path. */
export function buildRehearsalPgBouncer(): string {
  return execFileSync('bash', [PGBOUNCER_BUILD_SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}
