/** Rules of the Aurora cluster (AuroraOptimizedReads; modules/aurora-optimized-reads). */
import { checkEngineVersion, checkInstanceClass } from '../catalog-checks';
import { OPTIMIZED_READS_MIN_MAJOR } from '../engine-versions';
import { OPTIMIZED_READS_FAMILIES } from '../instance-classes';
import { type Rule, custom, integerRange, oneOf, pattern } from '../rule-table';
import { kmsKeyRule } from './shared';

export interface ClusterRuleInput {
  readonly instanceClass?: string;
  /** Extra cluster parameters the user merges over the kit's. */
  readonly parameters?: Readonly<Record<string, string>>;
  readonly engineVersion?: string;
  readonly readers?: number;
  readonly backupRetentionDays?: number;
  readonly clusterIdentifier?: string;
  /** Seconds between enhanced monitoring samples. */
  readonly monitoringInterval?: number;
  readonly createKmsKey?: boolean;
  readonly kmsKeyArn?: string;
}

const CLUSTER_MODULE = 'aurora-optimized-reads';

export const CLUSTER_RULES: ReadonlyArray<Rule<ClusterRuleInput>> = [
  custom({
    id: 'instance-class',
    properties: ['instanceClass'],
    terraform: { module: CLUSTER_MODULE, names: { instanceClass: 'instance_class' } },
    summary: `one of the catalog's Optimized Reads classes (${Object.keys(OPTIMIZED_READS_FAMILIES).map((f) => `db.${f}.*`).join(', ')})`,
    check: (i, n) => checkInstanceClass(i.instanceClass!, n('instanceClass')),
  }),
  custom({
    id: 'engine-version',
    properties: ['engineVersion'],
    terraform: { module: CLUSTER_MODULE, names: { engineVersion: 'engine_version' } },
    summary: `MAJOR.MINOR, ${OPTIMIZED_READS_MIN_MAJOR} or later, at or above the family's Optimized Reads floor, not deprecated (floor and deprecation are checked by a precondition on the cluster)`,
    // The floor depends on the family, so this rule also reads instanceClass when it is valid.
    check: (i, n) => checkEngineVersion(i.engineVersion!, i.instanceClass, n('engineVersion')),
  }),
  custom({
    id: 'parameters-keep-tls',
    properties: ['parameters'],
    terraform: { module: CLUSTER_MODULE, names: { parameters: 'parameters' } },
    summary: 'rds.force_ssl, if set, must stay 1',
    // The kit forces TLS by parameter; an override must not quietly turn that off.
    check: (i, n) => {
      const forceSsl = i.parameters!['rds.force_ssl'];
      return forceSsl !== undefined && forceSsl !== '1'
        ? `${n('parameters')} rds.force_ssl=${forceSsl} would let clients connect without TLS: remove it (the kit sets rds.force_ssl=1)`
        : undefined;
    },
  }),
  integerRange({
    id: 'readers',
    properties: ['readers'],
    terraform: { module: CLUSTER_MODULE, names: { readers: 'readers' } },
    min: 0,
    max: 15,
    fix: 'Aurora allows up to 15 readers per cluster',
    aws: {
      constraint: 'an Aurora DB cluster has one writer and up to 15 Aurora Replicas',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Replication.html'],
    },
  }),
  integerRange({
    id: 'backup-retention',
    properties: ['backupRetentionDays'],
    terraform: { module: CLUSTER_MODULE, names: { backupRetentionDays: 'backup_retention_days' } },
    min: 7,
    max: 35,
    fix: 'keep at least a week of backups; RDS allows at most 35 days',
  }),
  pattern({
    id: 'cluster-identifier',
    properties: ['clusterIdentifier'],
    terraform: { module: CLUSTER_MODULE, names: { clusterIdentifier: 'cluster_identifier' } },
    // 50, not RDS's 63: instance identifiers append -writer and -reader-<n>.
    pattern: '^[a-z][a-z0-9-]{0,49}$',
    noDoubleOrTrailingHyphen: true,
    what: 'cluster identifier',
    use: '1 to 50 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
  }),
  oneOf({
    id: 'monitoring-interval',
    properties: ['monitoringInterval'],
    terraform: { module: CLUSTER_MODULE, names: { monitoringInterval: 'monitoring_interval' } },
    values: [1, 5, 10, 15, 30, 60],
    what: 'an enhanced monitoring interval',
    unit: 'seconds',
    aws: {
      constraint: 'MonitoringInterval is 0, 1, 5, 10, 15, 30 or 60 seconds (0 turns enhanced monitoring off, which the kit does not)',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBCluster.html', 'hashicorp/terraform-provider-aws internal/service/rds/cluster_instance.go (monitoring_interval: validation.IntInSlice)'],
    },
  }),
  kmsKeyRule<ClusterRuleInput>('cluster-kms-key', CLUSTER_MODULE),
];
