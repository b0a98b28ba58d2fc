import {
  ALARM_CATALOG,
  FLEET_HOSTS_TOKEN,
  ALARM_TOPIC_ACCESS,
  COMPARISON_SYMBOLS,
  DEFAULT_PROXY_ENDPOINT_NAME,
  DEPRECATED_ENGINE_VERSIONS,
  INSTANCE_CLASS_CATALOG,
  METRIC_CATALOG,
  METRIC_PERIOD_SECONDS,
  type MetricDimension,
  POOLER_LISTENER_SERIES,
  SCOPE_DIMENSIONS,
  TARGET_ROLE_SERIES,
  alarmArnPattern,
  OFFERED_ENGINE_VERSIONS,
  OPTIMIZED_READS_VERSION_FLOORS,
  type OptimizedReadsFamily,
  checkEngineVersion,
  optimizedReadsSizing,
  CONNECTION_RESERVE,
  RESERVED_CONNECTIONS,
  catalogMaxConnectionsPercentLeavingReserve,
} from '../model';
import { alignedMap, generatedBy, hclString, hclTemplate, hclValue, slot } from './hcl';
import { propertyNames } from './modules';

/** The catalog files: what the modules restate of lib/model as locals. */

/** How the cluster module names the engine version in messages. */
const ENGINE_VERSION = 'engine_version';

export function renderClusterCatalog(): string {
  const families = Object.keys(OPTIMIZED_READS_VERSION_FLOORS) as OptimizedReadsFamily[];
  const classes = INSTANCE_CLASS_CATALOG.map((spec) => {
    const s = optimizedReadsSizing(spec);
    return [
      spec.instanceClass,
      hclValue({
        family: spec.family,
        size: spec.size,
        vcpu: spec.vcpu,
        memory_gib: spec.memoryGiB,
        nvme_gb: spec.nvmeGB,
        nvme_gib: s.nvmeGiB,
        temporary_objects_gib: s.temporaryObjectsGiB,
        internal_gib: s.internalGiB,
        tiered_cache_gib: s.tieredCacheGiB,
        max_connections: s.maxConnections,
        max_connections_basis: s.maxConnectionsBasis,
      }),
    ] as const;
  });
  const floors = families.map((f) => [f, hclValue(OPTIMIZED_READS_VERSION_FLOORS[f])] as const);
  const belowFloor = families.flatMap((f) =>
    Object.keys(OPTIMIZED_READS_VERSION_FLOORS[f]).map((major) => {
      const probe = `${major}.0`;
      const spec = INSTANCE_CLASS_CATALOG.find((s) => s.family === f)!;
      const message = checkEngineVersion(probe, spec.instanceClass, ENGINE_VERSION);
      const prefix = `${ENGINE_VERSION} ${probe} is below the Optimized Reads floor`;
      if (!message?.startsWith(prefix)) throw new Error(`probe ${probe} is not below the ${f} floor: ${message}`);
      return [`${f}/${major}`, hclString(`${ENGINE_VERSION} @VALUE@${message.slice(`${ENGINE_VERSION} ${probe}`.length)}`)] as const;
    }),
  );
  const deprecated = DEPRECATED_ENGINE_VERSIONS.map((version) => [version, hclString(checkEngineVersion(version, undefined, ENGINE_VERSION)!)] as const);
  return [
    `# ${generatedBy('lib/model (instance-classes.ts, sizing.ts, engine-versions.ts, rules.ts)')}`,
    '#',
    '# The Optimized Reads instance-class catalog with its sizing (lib/model/instance-classes.ts, sizing.ts),',
    '# the version floors and the engine-version messages (engine-versions.ts, rules.ts).',
    '',
    'locals {',
    '  # DB instance class => family, size, vCPU, memory (GiB), NVMe (GB and GiB), and how Aurora splits the',
    '  # NVMe: temporary objects (2x memory), internal use (~10%), tiered cache (the rest); Aurora\'s default max_connections',
    '  # and how the kit knows it (published by AWS for the class or one of its memory and architecture, capped, or deduced).',
    '  instance_classes = {',
    ...alignedMap('    ', classes),
    '  }',
    '',
    '  # Optimized Reads floor per family and major version; a major not listed has no floor.',
    '  version_floors = {',
    ...alignedMap('    ', floors),
    '  }',
    '',
    `  offered_engine_versions    = ${hclValue(OFFERED_ENGINE_VERSIONS)}`,
    `  deprecated_engine_versions = ${hclValue(DEPRECATED_ENGINE_VERSIONS)}`,
    '',
    '  # "<family>/<major>" => the model\'s message for a version below that floor (@VALUE@: the version).',
    '  below_floor_messages = {',
    ...alignedMap('    ', belowFloor),
    '  }',
    '',
    '  # Deprecated version => the model\'s message.',
    '  deprecated_messages = {',
    ...alignedMap('    ', deprecated),
    '  }',
    '}',
    '',
  ].join('\n');
}

/**
 * The connection budget's locals the pool modules restate (lib/model/sizing.ts): the connections each
 * instance keeps from the pools, and, for RDS Proxy (whose percent is of max_connections alone), the
 * largest MaxConnectionsPercent that leaves them on every class.
 */
export function poolBudgetLocals(options: { readonly proxyPercent: boolean }): string[] {
  return [
    `  # Connections of each instance no pool takes: ${CONNECTION_RESERVE.map((p) => `${p.id} ${p.connections}`).join(', ')}.`,
    ...alignedMap('  ', [['reserved_connections', String(RESERVED_CONNECTIONS)]]),
    ...(options.proxyPercent
      ? ['  # The largest MaxConnectionsPercent that leaves them on every catalog class (used when max_connections is not given).', ...alignedMap('  ', [['catalog_max_connections_percent', String(catalogMaxConnectionsPercentLeavingReserve())]])]
      : []),
  ];
}

/** What modules/rds-proxy restates: the connection budget. */
export function renderRdsProxyCatalog(): string {
  return [`# ${generatedBy('lib/model/sizing.ts')}`, '', 'locals {', ...poolBudgetLocals({ proxyPercent: true }), '}', ''].join('\n');
}

/** How the dashboard module names the alarm-name prefix and the data sources the alarm ARN pattern reads. */
const ALARM_ARN_PARTS = ['data.aws_partition.current.partition', 'data.aws_region.current.region', 'data.aws_caller_identity.current.account_id', 'local.alarm_name_prefix'];

export function renderMetricCatalog(): string {
  const thresholdKeys = propertyNames('dashboard');
  const thresholdKey = (name: string) => thresholdKeys[name].replace(/^thresholds\./, '');
  const dimensions = (Object.entries(SCOPE_DIMENSIONS) as Array<[string, ReadonlyArray<MetricDimension>]>).map(
    ([scope, dims]) =>
      [scope, hclValue(dims.map((d) => ({ name: d.name, subject: 'subject' in d ? snake(d.subject) : null, value: 'value' in d ? d.value : null })))] as const,
  );
  return [
    `# ${generatedBy('lib/model/metrics.ts and alarms.ts')}`,
    '#',
    '# The dashboard metric catalog (lib/model/metrics.ts): every metric the dashboard charts, with the instances',
    '# that publish it; the dimension set of each scope; the alarm catalog (lib/model/alarms.ts): every alarm, on',
    '# which metrics at which statistic, its direction and threshold; and what CloudWatch needs of the alarm topic.',
    '',
    'locals {',
    '  metric_catalog = [',
    ...METRIC_CATALOG.map(
      (m) =>
        `    ${hclValue({
          namespace: m.namespace,
          metric_name: m.metricName,
          scope: m.scope,
          statistics: m.statistics,
          unit: m.unit,
          optimized_reads_only: m.optimizedReadsOnly ?? false,
          instances: m.instances ?? 'all',
        })},`,
    ),
    '  ]',
    '',
    '  # Scope => its dimensions in order: each takes the line\'s subject value of that name, or a fixed value.',
    '  scope_dimensions = {',
    ...alignedMap('    ', dimensions),
    '  }',
    '',
    ...alignedMap('  ', [
      ['default_endpoint_name', hclString(DEFAULT_PROXY_ENDPOINT_NAME)],
      ['target_role_series', hclValue(TARGET_ROLE_SERIES.map((t) => ({ role: t.role, alarm_name: t.alarmName })))],
      [
        'pooler_listener_series',
        hclValue(
          POOLER_LISTENER_SERIES.map((l) => ({ listener: l.listener, role: l.role, session: l.session, alarm_name: l.alarmName, target_group_alarm_name: l.targetGroupAlarmName, target_label: l.targetLabel, numbered: l.numbered })),
        ),
      ],
      ['metric_period', String(METRIC_PERIOD_SECONDS)],
      // An expression's token for the PgBouncer fleet's host count (pgbouncer_hosts).
      ['fleet_hosts_token', hclString(FLEET_HOSTS_TOKEN)],
    ]),
    '',
    '  # Every alarm, per line of its scope (of the instances, those `instances` selects): the metrics it reads',
    '  # by id (an expression alarm) or its one metric, at the catalog\'s first statistic.',
    '  alarm_catalog = [',
    ...ALARM_CATALOG.map(
      (a) =>
        `    ${hclValue({
          name: a.name,
          scope: a.scope,
          instances: a.instances,
          inputs: Object.entries(a.inputs).map(([id, i]) => ({ id, namespace: i.namespace, metric_name: i.metricName, statistic: i.statistic })),
          expression: a.expression?.expression ?? null,
          expression_label: a.expression?.label ?? null,
          comparison: a.comparison,
          symbol: COMPARISON_SYMBOLS[a.comparison],
          threshold: thresholdKey(a.threshold),
          evaluation_periods: a.evaluationPeriods,
          datapoints_to_alarm: a.datapointsToAlarm,
          missing_data: a.missingData,
        })},`,
    ),
    '  ]',
    '',
    '  # What cloudwatch.amazonaws.com may do with the alarm topic and its key: only for this account\'s alarms',
    '  # whose names start with the prefix (aws:SourceArn).',
    ...alignedMap('  ', [
      ['alarm_topic_sid', hclString(ALARM_TOPIC_ACCESS.sid)],
      ['alarm_topic_principal', hclString(ALARM_TOPIC_ACCESS.principal)],
      ['alarm_topic_actions', hclValue(ALARM_TOPIC_ACCESS.topicActions)],
      ['alarm_key_actions', hclValue(ALARM_TOPIC_ACCESS.keyActions)],
      ['alarm_source_arn', hclTemplate(alarmArnPattern(slot(0), slot(1), slot(2), slot(3)), ALARM_ARN_PARTS)],
    ]),
    '}',
    '',
  ].join('\n');
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
