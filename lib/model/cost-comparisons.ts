/**
 * What the cost estimate compares the deployment with: RDS Proxy against the PgBouncer fleet for the same
 * cluster (the crossover in vCPUs), and Aurora Standard against the kit's I/O-Optimized storage (the tiered
 * cache it loses, the break-even I/O volume).
 */
import { AURORA_STORAGE_IO_OPTIMIZED, type DeploymentInventory, clusterVcpus } from './cost-inventory';
import { type CostEstimateOptions, instanceHourPrice, monthlyCost } from './cost-pricing';
import { findInstanceClass } from './instance-classes';
import { DEFAULT_FLEET_HOSTS } from './pgbouncer-fleet';
import { DEFAULT_POOLER_INSTANCE_TYPE } from './pgbouncer-hosts';
import { AURORA_IO_OPTIMIZED_INSTANCE_FACTOR, HOURS_PER_MONTH, RDS_PROXY_MIN_VCPUS, type RegionPrices } from './prices';
import { optimizedReadsSizing } from './sizing';

/** RDS Proxy against the PgBouncer fleet for the same cluster. */
export interface EngineComparison {
  readonly clusterVcpus: number;
  readonly rdsProxyMonthlyUsd?: number;
  readonly fleetMonthlyUsd?: number;
  /** What the fleet's figure counts. */
  readonly fleetParts: string;
  /** RDS Proxy costs less below this many vCPUs of the cluster's instances, the fleet above. */
  readonly crossoverVcpus?: number;
  /** The crossover as instances of the cluster's class (writer included), when the cluster has one class. */
  readonly crossoverInstances?: number;
  readonly verdict: string;
}

/** What Aurora Standard would cost and lose against the kit's I/O-Optimized cluster. */
export interface StorageComparison {
  readonly ioOptimizedMonthlyUsd?: number;
  readonly standardMonthlyUsd?: number;
  /** Standard costs less while monthly I/O stays below this many million requests. */
  readonly breakEvenIoMillions?: number;
  readonly loses: string;
  readonly summary: string;
}

/** Interface endpoints the fleet serves clients through: the deployment's, else one per listener (read-write, read-only). */
const DEFAULT_POOLER_ENDPOINTS = 2;
const DEFAULT_ENDPOINT_AZS = 2;

/** RDS Proxy against the fleet for the same cluster, and the cluster size where they cost the same. */
export function compareEngines(inventory: DeploymentInventory, prices: RegionPrices | undefined, region: string): EngineComparison {
  const vcpus = clusterVcpus(inventory.instanceClasses) ?? 0;
  const proxyRate = prices?.rdsProxyVcpuHour?.usd;
  const hosts = inventory.fleet?.hosts ?? DEFAULT_FLEET_HOSTS;
  const instanceType = inventory.fleet?.instanceType ?? DEFAULT_POOLER_INSTANCE_TYPE;
  const poolerEndpoints = inventory.interfaceEndpoints.filter((e) => e.pooler);
  const endpoints = poolerEndpoints.length > 0 ? poolerEndpoints.length : Math.max(DEFAULT_POOLER_ENDPOINTS, inventory.rdsProxyEndpoints);
  const endpointAzs = poolerEndpoints.length > 0 ? poolerEndpoints.reduce((s, e) => s + (e.azs ?? DEFAULT_ENDPOINT_AZS), 0) : endpoints * DEFAULT_ENDPOINT_AZS;
  const hostHour = prices?.ec2InstanceHour[instanceType]?.usd;
  const nlbHour = prices?.nlbHour?.usd;
  const endpointHour = prices?.interfaceEndpointAzHour?.usd;
  const fleetParts = `${hosts} x ${instanceType}, 1 NLB, ${endpoints} interface endpoints in ${endpointAzs} endpoint-AZs; not counting the AWS-service endpoints its hosts use without NAT`;
  const rdsProxyMonthlyUsd = proxyRate === undefined ? undefined : monthlyCost(proxyRate, Math.max(RDS_PROXY_MIN_VCPUS, vcpus) * HOURS_PER_MONTH);
  const fleetMonthlyUsd =
    hostHour === undefined || nlbHour === undefined || endpointHour === undefined
      ? undefined
      : monthlyCost(1, (hosts * hostHour + nlbHour + endpointAzs * endpointHour) * HOURS_PER_MONTH);
  if (rdsProxyMonthlyUsd === undefined || fleetMonthlyUsd === undefined) {
    return { clusterVcpus: vcpus, rdsProxyMonthlyUsd, fleetMonthlyUsd, fleetParts, verdict: `not comparable in ${region}: the table lacks ${[proxyRate === undefined && 'the RDS Proxy price', fleetMonthlyUsd === undefined && 'a price of the fleet'].filter(Boolean).join(' and ')}` };
  }
  // RDS Proxy grows with the database's vCPUs; the fleet's cost does not.
  const crossoverVcpus = Math.max(RDS_PROXY_MIN_VCPUS, Math.round((fleetMonthlyUsd / (proxyRate! * HOURS_PER_MONTH)) * 10) / 10);
  const classes = [...new Set(inventory.instanceClasses)];
  const perInstance = classes.length === 1 ? findInstanceClass(classes[0])?.vcpu : undefined;
  const crossoverInstances = perInstance ? Math.ceil(crossoverVcpus / perInstance) : undefined;
  const cheaper = rdsProxyMonthlyUsd <= fleetMonthlyUsd ? 'RDS Proxy' : 'the PgBouncer fleet';
  const at = crossoverInstances ? `; from ${crossoverInstances} x ${classes[0]} (writer + ${crossoverInstances - 1} readers) the fleet costs less` : ', the fleet above';
  return {
    clusterVcpus: vcpus,
    rdsProxyMonthlyUsd,
    fleetMonthlyUsd,
    fleetParts,
    crossoverVcpus,
    crossoverInstances,
    verdict: `for this cluster (${vcpus} vCPUs) ${cheaper} costs less; RDS Proxy costs less below ${crossoverVcpus} vCPUs${at}`,
  };
}

/** What Aurora Standard would cost and lose against I/O-Optimized, for the same instances. */
export function compareStorage(inventory: DeploymentInventory, prices: RegionPrices | undefined, region: string, options: CostEstimateOptions): StorageComparison {
  const classes = [...new Set(inventory.instanceClasses)];
  const cacheParts = classes.map((cls) => {
    const spec = findInstanceClass(cls);
    return spec ? `${optimizedReadsSizing(spec).tieredCacheGiB} GiB per ${cls}` : undefined;
  });
  const loses = `the tiered cache (${cacheParts.filter(Boolean).join(', ') || 'the NVMe extension of the buffer pool'}): Optimized Reads caches pages on NVMe only on I/O-Optimized; temporary objects stay on NVMe. The kit deploys ${AURORA_STORAGE_IO_OPTIMIZED} only, so Standard means leaving the kit's cluster.`;
  const ioStorage = prices?.auroraIoOptimizedStorageGbMonth?.usd;
  const stdStorage = prices?.auroraStandardStorageGbMonth?.usd;
  const ioRate = prices?.auroraStandardIoPerMillion?.usd;
  let ioInstances = 0;
  let instancesKnown = true;
  for (const cls of inventory.instanceClasses) {
    const hour = instanceHourPrice(prices, cls, options);
    if (!hour) instancesKnown = false;
    else ioInstances += hour.usd * HOURS_PER_MONTH;
  }
  const savedOnInstances = ioInstances * (1 - 1 / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR);
  const gb = options.storageGb;
  if (ioStorage === undefined || stdStorage === undefined || ioRate === undefined) {
    return { loses, summary: `Standard instances cost 1/${AURORA_IO_OPTIMIZED_INSTANCE_FACTOR} of I/O-Optimized's; the table has no ${region} storage prices to say more` };
  }
  const perGb = `storage $${stdStorage} instead of $${ioStorage} per GB-month, plus $${ioRate} per million I/O requests`;
  if (!instancesKnown) {
    return {
      loses,
      summary: `instances at 1/${AURORA_IO_OPTIMIZED_INSTANCE_FACTOR} of the I/O-Optimized price (${Math.round((1 - 1 / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR) * 1000) / 10}% less), ${perGb}; give --instance-price to see the break-even I/O volume`,
    };
  }
  const savedOnStorage = gb === undefined ? 0 : gb * (ioStorage - stdStorage);
  const breakEvenIoMillions = Math.round(((savedOnInstances + savedOnStorage) / ioRate) * 10) / 10;
  const ioOptimizedMonthlyUsd = monthlyCost(1, ioInstances + (gb ?? 0) * ioStorage);
  const io = options.ioMillionsPerMonth;
  const standardMonthlyUsd = io === undefined ? undefined : monthlyCost(1, ioInstances / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR + (gb ?? 0) * stdStorage + io * ioRate);
  const storageNote = gb === undefined ? ' (storage not counted: give --storage-gb)' : '';
  return {
    ioOptimizedMonthlyUsd,
    standardMonthlyUsd,
    breakEvenIoMillions,
    loses,
    summary: `instances ${Math.round((1 - 1 / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR) * 1000) / 10}% less, ${perGb}; it costs less than I/O-Optimized ($${ioOptimizedMonthlyUsd.toFixed(2)}/month${storageNote}) only below ${breakEvenIoMillions} million I/O requests a month${standardMonthlyUsd === undefined ? '' : `; at ${io} million: $${standardMonthlyUsd.toFixed(2)}/month`}`,
  };
}
