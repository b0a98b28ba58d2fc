import {
  DEPRECATED_ENGINE_VERSIONS,
  INSTANCE_CLASS_CATALOG,
  METRIC_CATALOG,
  OFFERED_ENGINE_VERSIONS,
  OPTIMIZED_READS_VERSION_FLOORS,
  type OptimizedReadsFamily,
  checkEngineVersion,
  optimizedReadsSizing,
} from '../model';
import { alignedMap, generatedBy, hclString, hclValue } from './hcl';

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
    '  # NVMe: temporary objects (2x memory), internal use (~10%), tiered cache (the rest); default max_connections.',
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

export function renderMetricCatalog(): string {
  return [
    `# ${generatedBy('lib/model/metrics.ts')}`,
    '#',
    '# The dashboard metric catalog (lib/model/metrics.ts): every metric the dashboard charts.',
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
        })},`,
    ),
    '  ]',
    '}',
    '',
  ].join('\n');
}
