import { OptimizedReadsFamily } from './instance-classes';
import type { AwsSource } from './rule-table';

/**
 * Aurora PostgreSQL engine versions and the Optimized Reads version floors.
 *
 * Floors: "Aurora Optimized Reads" in the Aurora User Guide (AuroraPostgreSQL.optimized.reads):
 * r6gd/r6id need 14.9, 15.4 or 16.1 and higher; r8gd, a later family, needs 14.12, 15.7, 16.3 or 17.4
 * and higher. A major version above the last one listed for a family has no separate floor.
 *
 * Offered and deprecated versions: the `AuroraPostgresEngineVersion` constants of aws-cdk-lib (the
 * deprecated ones are marked "no longer supported by Amazon RDS"). A test reads aws-cdk-lib's typings
 * and fails when this table and aws-cdk-lib disagree, so an upgrade cannot silently drift.
 */

export interface EngineVersion {
  readonly major: number;
  readonly minor: number;
}

/** Lowest major version with Optimized Reads on any family. */
export const OPTIMIZED_READS_MIN_MAJOR = 14;

/** Optimized Reads floor per family and major version, as `major.minor`. */
export const OPTIMIZED_READS_VERSION_FLOORS: Readonly<Record<OptimizedReadsFamily, Readonly<Record<number, string>>>> = {
  r6gd: { 14: '14.9', 15: '15.4', 16: '16.1' },
  r6id: { 14: '14.9', 15: '15.4', 16: '16.1' },
  r8gd: { 14: '14.12', 15: '15.7', 16: '16.3', 17: '17.4' },
};

/** Versions RDS still offers (aws-cdk-lib marks none of them deprecated), majors 14 and up. */
export const OFFERED_ENGINE_VERSIONS: ReadonlyArray<string> = [
  '14.13', '14.15', '14.17', '14.18', '14.19', '14.20', '14.22',
  '15.8', '15.10', '15.12', '15.13', '15.14', '15.15', '15.17',
  '16.4', '16.6', '16.8', '16.9', '16.10', '16.11', '16.13',
  '17.4', '17.5', '17.6', '17.7', '17.9',
  '18.3', '18.4', '18.6',
];

/** Versions RDS no longer offers (deprecated in aws-cdk-lib), majors 14 and up. */
export const DEPRECATED_ENGINE_VERSIONS: ReadonlyArray<string> = [
  '14.3', '14.4', '14.5', '14.6', '14.7', '14.8', '14.9', '14.10', '14.11', '14.12', '14.14',
  '15.2', '15.3', '15.4', '15.5', '15.6', '15.7', '15.9',
  '16.0', '16.1', '16.2', '16.3', '16.5',
  '17.1', '17.2',
];

/**
 * The kit's default engine version: the newest 17.x that aws-cdk-lib names. Major 17 is above every
 * family's floor (r6gd/r6id from 16.1 on, r8gd from 17.4 on); 18.x is accepted when asked for but not
 * the default until Optimized Reads on 18 has a track record.
 */
export const DEFAULT_ENGINE_VERSION = '17.9';

/**
 * Whether the kit lets RDS apply minor engine upgrades by itself: off by default in both flavours.
 * Both pin a full `MAJOR.MINOR` version, and RDS cannot go back down: once RDS has upgraded the
 * cluster, CloudFormation sends the older pinned version on the next update that touches the cluster
 * and the update fails (aws-cdk#15475), and a Terraform plan proposes the downgrade unless the provider
 * suppresses it (terraform-provider-aws#49396). With upgrades off, a minor upgrade is a version bump the
 * user makes.
 */
export const DEFAULT_AUTO_MINOR_VERSION_UPGRADE = false;

export const ENGINE_VERSION_NO_DOWNGRADE: AwsSource = {
  constraint:
    'RDS cannot downgrade an engine version; automatic minor upgrades of an Aurora cluster need the setting on the cluster and on every instance, and change the running version outside the stack or state',
  sources: [
    'https://github.com/aws/aws-cdk/issues/15475',
    'https://github.com/hashicorp/terraform-provider-aws/pull/49396',
    'https://docs.aws.amazon.com/config/latest/developerguide/rds-automatic-minor-version-upgrade-enabled.html',
  ],
};

/** Said at synth (CDK annotation) and plan (Terraform check) when automatic minor upgrades are turned on. */
export function autoMinorVersionUpgradeWarning(
  engineVersion: string,
  names: { engineVersion: string; autoMinorVersionUpgrade: string } = { engineVersion: 'engineVersion', autoMinorVersionUpgrade: 'autoMinorVersionUpgrade' },
): string {
  return (
    `${names.autoMinorVersionUpgrade} is on: RDS may upgrade the cluster past ${names.engineVersion} ${engineVersion} and cannot downgrade it; ` +
    `after an upgrade, set ${names.engineVersion} to the version the cluster runs before the next deployment`
  );
}

export function parseEngineVersion(version: string): EngineVersion | undefined {
  const match = /^(\d+)\.(\d+)$/.exec(version);
  return match ? { major: Number(match[1]), minor: Number(match[2]) } : undefined;
}

export function compareEngineVersions(a: EngineVersion, b: EngineVersion): number {
  return a.major !== b.major ? a.major - b.major : a.minor - b.minor;
}

/**
 * The Optimized Reads floor for a family and major version, or undefined when every version of that
 * major qualifies (a major above the family's last documented one).
 */
export function versionFloor(family: OptimizedReadsFamily, major: number): string | undefined {
  return OPTIMIZED_READS_VERSION_FLOORS[family][major];
}

/** The newest offered version of a major, used to suggest a fix. */
export function newestOfferedVersion(major?: number): string | undefined {
  const candidates = OFFERED_ENGINE_VERSIONS.filter((v) => major === undefined || parseEngineVersion(v)!.major === major);
  return candidates.sort((a, b) => compareEngineVersions(parseEngineVersion(a)!, parseEngineVersion(b)!)).pop();
}

/** The cluster parameter group family for an engine version, e.g. `aurora-postgresql17`. */
export function parameterGroupFamily(version: string): string {
  const parsed = parseEngineVersion(version);
  if (!parsed) throw new Error(`engineVersion ${version} is not of the form MAJOR.MINOR`);
  return `aurora-postgresql${parsed.major}`;
}
