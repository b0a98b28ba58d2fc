/**
 * The monthly cost of what a deployment runs, from the price table (prices.ts). One implementation for
 * both flavours: `synth summary` reads a cloud assembly and `plan summary` a Terraform plan into a
 * DeploymentInventory, and both print estimateCost's result with formatCostEstimate.
 *
 * Only what is billed per hour is priced. What depends on traffic (Aurora Standard I/O, NLB capacity
 * units, data processed by interface endpoints) is named with its unit price, or priced from a volume
 * the caller gives. Lambda, CloudWatch, KMS, Secrets Manager, backups and data transfer are not priced.
 */
import { findInstanceClass } from './instance-classes';
import { DEFAULT_FLEET_HOSTS } from './pgbouncer-fleet';
import { DEFAULT_POOLER_INSTANCE_TYPE } from './pgbouncer-hosts';
import {
  AURORA_IO_OPTIMIZED_INSTANCE_FACTOR,
  HOURS_PER_MONTH,
  PRICE_TABLE,
  PRICES_READ_ON,
  RDS_PROXY_MIN_VCPUS,
  type Price,
  type PricePage,
  type RegionPrices,
} from './prices';
import { optimizedReadsSizing } from './sizing';

/** Aurora's storage configurations, as CloudFormation's StorageType and Terraform's storage_type name them. */
export const AURORA_STORAGE_IO_OPTIMIZED = 'aurora-iopt1';
export const AURORA_STORAGE_STANDARD = 'aurora';

/** Where an estimate prices a deployment that names no Region (a region-agnostic CDK stack). */
export const DEFAULT_ESTIMATE_REGION = 'us-east-1';

/** An interface VPC endpoint the deployment creates. */
export interface InterfaceEndpointUse {
  /** What it reaches: `PgBouncer read-write`, `secretsmanager`, ... */
  readonly service: string;
  /** It is an endpoint of the PgBouncer fleet's endpoint service (the pooling tier's own). */
  readonly pooler: boolean;
  /** Availability Zones it has a network interface in; undefined when not known at plan. */
  readonly azs?: number;
}

/** The PgBouncer fleet's hosts. */
export interface FleetHosts {
  readonly hosts: number;
  /** EC2 instance type, e.g. `c7g.large`. */
  readonly instanceType: string;
}

/** What a deployment runs that is billed by the hour, read from a template or a plan. */
export interface DeploymentInventory {
  /** The deployment's Region, when the template or plan says it. */
  readonly region?: string;
  /** The cluster's storage configuration (`aurora-iopt1` or `aurora`); undefined when there is no cluster or it is not known. */
  readonly storageType?: string;
  /** The DB instance class of each Aurora instance (writer and readers). */
  readonly instanceClasses: string[];
  /** RDS proxies in front of the cluster. */
  readonly rdsProxies: number;
  /** Endpoints of the RDS proxies besides their default ones. */
  readonly rdsProxyEndpoints: number;
  /** The PgBouncer fleet's hosts, when the deployment has one. */
  readonly fleet?: FleetHosts;
  readonly networkLoadBalancers: number;
  readonly interfaceEndpoints: InterfaceEndpointUse[];
}

/** Volumes and prices the caller knows better than the table. */
export interface CostEstimateOptions {
  /** Price in this Region instead of the deployment's (or when it names none). */
  readonly region?: string;
  /** I/O-Optimized instance-hour by DB instance class, for classes the table has no price for (or to override it). */
  readonly instanceHourlyUsd?: { readonly [instanceClass: string]: number };
  /** The cluster volume's size, to price storage per month. */
  readonly storageGb?: number;
  /** Aurora Standard I/O requests per month, in millions, to price Standard's I/O. */
  readonly ioMillionsPerMonth?: number;
}

/** One line of the estimate. */
export interface CostLine {
  /** What is billed, with its count: `3 x db.r6gd.xlarge (I/O-Optimized)`. */
  readonly item: string;
  /** Unit price in USD and its unit, when known. */
  readonly unitUsd?: number;
  readonly unit?: string;
  /** Billed units per month (instance-hours, vCPU-hours, GB-months). */
  readonly quantity?: number;
  /** Monthly cost in USD; undefined when the unit price or the volume is not known. */
  readonly monthlyUsd?: number;
  /** Why the line has no monthly figure, or what it assumes. */
  readonly note?: string;
  /** The price's page, or `given` when the caller supplied it. */
  readonly source?: string;
}

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

export interface CostEstimate {
  readonly region: string;
  readonly location?: string;
  /** The deployment named no Region and none was given: priced in DEFAULT_ESTIMATE_REGION. */
  readonly regionAssumed: boolean;
  readonly pricesAsOf: string;
  readonly lines: CostLine[];
  /** Unit prices of what depends on traffic, not in the total. */
  readonly trafficLines: CostLine[];
  /** Sum of the lines that have a monthly figure. */
  readonly knownMonthlyUsd: number;
  /** Items without a monthly figure (so the total is a lower bound). */
  readonly unpriced: string[];
  readonly engines?: EngineComparison;
  readonly storage?: StorageComparison;
  /** Pages the figures come from. */
  readonly sources: string[];
  readonly footer: string;
}

/** A cost option that cannot be used. */
export class CostOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CostOptionError';
  }
}

const monthly = (unitUsd: number, quantity: number): number => Math.round(unitUsd * quantity * 100) / 100;
const sourceOf = (p: { readonly page: PricePage }): string => p.page.name;

function regionPrices(region: string): RegionPrices | undefined {
  return PRICE_TABLE[region];
}

/** I/O-Optimized instance-hour for a class: the caller's, else the table's. */
function instanceHour(prices: RegionPrices | undefined, cls: string, options: CostEstimateOptions): { usd: number; source: string } | undefined {
  const given = options.instanceHourlyUsd?.[cls];
  if (given !== undefined) return { usd: given, source: 'given' };
  const p = prices?.auroraIoOptimizedInstanceHour[cls];
  return p ? { usd: p.usd, source: sourceOf(p) } : undefined;
}

function validateOptions(options: CostEstimateOptions): void {
  for (const [cls, usd] of Object.entries(options.instanceHourlyUsd ?? {})) {
    if (!Number.isFinite(usd) || usd <= 0) throw new CostOptionError(`instance price ${cls}=${usd} is not a positive number of USD per hour: pass e.g. ${cls}=0.5`);
  }
  for (const [name, value] of [['storageGb', options.storageGb], ['ioMillionsPerMonth', options.ioMillionsPerMonth]] as const) {
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) throw new CostOptionError(`${name} ${value} is not a number of 0 or more: pass e.g. 100`);
  }
}

const countBy = (items: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  return counts;
};

/** vCPUs of the cluster's instances; undefined when a class is not in the catalog. */
function clusterVcpus(instanceClasses: ReadonlyArray<string>): number | undefined {
  let total = 0;
  for (const cls of instanceClasses) {
    const spec = findInstanceClass(cls);
    if (!spec) return undefined;
    total += spec.vcpu;
  }
  return total;
}

/** The monthly cost of the deployment's hourly resources, with what depends on traffic named. */
export function estimateCost(inventory: DeploymentInventory, options: CostEstimateOptions = {}): CostEstimate {
  validateOptions(options);
  const region = options.region ?? inventory.region ?? DEFAULT_ESTIMATE_REGION;
  const regionAssumed = options.region === undefined && inventory.region === undefined;
  const prices = regionPrices(region);
  const lines: CostLine[] = [];
  const traffic: CostLine[] = [];
  const sources = new Set<string>();
  const unknown = (what: string): string => `no ${what} price for ${region} in the table (prices.ts)`;
  const add = (line: CostLine): void => {
    lines.push(line);
    if (line.source && line.source !== 'given') sources.add(line.source);
  };
  const hourly = (item: string, p: Price | undefined, count: number, what: string): void => {
    if (count <= 0) return;
    if (!p) {
      add({ item, note: unknown(what) });
      return;
    }
    const quantity = count * HOURS_PER_MONTH;
    add({ item, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthly(p.usd, quantity), source: sourceOf(p) });
  };
  const ioOptimized = inventory.storageType !== AURORA_STORAGE_STANDARD;

  // Aurora instances, by class.
  for (const [cls, n] of countBy(inventory.instanceClasses)) {
    const configuration = ioOptimized ? 'I/O-Optimized' : 'Standard';
    const item = `${n} x ${cls} (${configuration})`;
    const hour = instanceHour(prices, cls, options);
    if (!hour) {
      add({ item, note: `${unknown(`${cls} instance-hour`)}: give it with --instance-price ${cls}=USD (${ioOptimized ? 'I/O-Optimized' : 'the I/O-Optimized price; Standard is that / ' + AURORA_IO_OPTIMIZED_INSTANCE_FACTOR})` });
      continue;
    }
    const usd = ioOptimized ? hour.usd : Math.round((hour.usd / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR) * 10_000) / 10_000;
    const quantity = n * HOURS_PER_MONTH;
    add({ item, unitUsd: usd, unit: 'instance-hour', quantity, monthlyUsd: monthly(usd, quantity), note: hour.source === 'given' ? 'price given, not from the table' : undefined, source: hour.source });
  }

  // Storage: per GB-month, and on Standard per I/O request too.
  if (inventory.storageType !== undefined || inventory.instanceClasses.length > 0) {
    const storage = ioOptimized ? prices?.auroraIoOptimizedStorageGbMonth : prices?.auroraStandardStorageGbMonth;
    const item = `cluster storage (${ioOptimized ? 'I/O-Optimized' : 'Standard'})`;
    if (!storage) add({ item, note: unknown('Aurora storage') });
    else if (options.storageGb === undefined) add({ item, unitUsd: storage.usd, unit: storage.unit, note: 'grows with the data: give its size with --storage-gb', source: sourceOf(storage) });
    else add({ item, unitUsd: storage.usd, unit: storage.unit, quantity: options.storageGb, monthlyUsd: monthly(storage.usd, options.storageGb), source: sourceOf(storage) });
    if (!ioOptimized) {
      const io = prices?.auroraStandardIoPerMillion;
      if (!io) add({ item: 'I/O requests (Standard)', note: unknown('Aurora I/O') });
      else if (options.ioMillionsPerMonth === undefined) traffic.push({ item: 'I/O requests (Standard)', unitUsd: io.usd, unit: io.unit, source: sourceOf(io) });
      else add({ item: 'I/O requests (Standard)', unitUsd: io.usd, unit: io.unit, quantity: options.ioMillionsPerMonth, monthlyUsd: monthly(io.usd, options.ioMillionsPerMonth), source: sourceOf(io) });
    }
  }

  // RDS Proxy: the database's vCPUs, at least RDS_PROXY_MIN_VCPUS.
  const vcpus = clusterVcpus(inventory.instanceClasses);
  if (inventory.rdsProxies > 0) {
    const item = `${inventory.rdsProxies} x RDS Proxy`;
    const p = prices?.rdsProxyVcpuHour;
    if (vcpus === undefined) add({ item, note: 'the cluster has an instance class outside the catalog: its vCPUs are not known' });
    else if (!p) add({ item, note: unknown('RDS Proxy') });
    else {
      const billed = Math.max(RDS_PROXY_MIN_VCPUS, vcpus);
      const quantity = inventory.rdsProxies * billed * HOURS_PER_MONTH;
      add({ item: `${item} (${billed} vCPUs of the database's instances)`, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthly(p.usd, quantity), source: sourceOf(p) });
    }
    if (inventory.rdsProxyEndpoints > 0) add({ item: `${inventory.rdsProxyEndpoints} x RDS Proxy endpoint`, note: 'not priced here: the table has no figure of its own for proxy endpoints (see Amazon RDS Proxy pricing)' });
  }

  // The PgBouncer fleet: its hosts, the NLB, the endpoints.
  if (inventory.fleet) {
    const { hosts, instanceType } = inventory.fleet;
    hourly(`${hosts} x ${instanceType} (PgBouncer hosts)`, prices?.ec2InstanceHour[instanceType], hosts, `${instanceType} instance-hour`);
  }
  hourly(`${inventory.networkLoadBalancers} x Network Load Balancer`, prices?.nlbHour, inventory.networkLoadBalancers, 'NLB hour');
  if (inventory.networkLoadBalancers > 0) traffic.push({ item: 'NLB capacity units (new flows, active flows, bytes)', unitUsd: prices?.nlbNlcuHour?.usd, unit: prices?.nlbNlcuHour?.unit, note: prices?.nlbNlcuHour ? undefined : unknown('NLCU'), source: prices?.nlbNlcuHour && sourceOf(prices.nlbNlcuHour) });
  if (inventory.fleet || inventory.interfaceEndpoints.some((e) => e.pooler)) add({ item: 'endpoint service (PrivateLink)', note: 'no line of its own: its NLB and the interface endpoints to it are billed' });
  for (const pooler of [true, false]) {
    const endpoints = inventory.interfaceEndpoints.filter((e) => e.pooler === pooler);
    if (endpoints.length === 0) continue;
    const assumed = endpoints.filter((e) => e.azs === undefined).length;
    const azHours = endpoints.reduce((sum, e) => sum + (e.azs ?? 2), 0);
    const names = [...countBy(endpoints.map((e) => e.service))].map(([s, n]) => (n > 1 ? `${n} x ${s}` : s)).join(', ');
    const item = `${endpoints.length} x interface endpoint, ${pooler ? 'PgBouncer endpoint service' : 'AWS services'} (${azHours} endpoint-AZs)`;
    const note = [pooler ? undefined : names, assumed > 0 ? `${assumed} with subnets unknown at plan counted in 2 AZs` : undefined].filter(Boolean).join('; ') || undefined;
    const p = prices?.interfaceEndpointAzHour;
    if (!p) add({ item, note: [note, unknown('interface endpoint')].filter(Boolean).join('; ') });
    else {
      const quantity = azHours * HOURS_PER_MONTH;
      add({ item, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthly(p.usd, quantity), note, source: sourceOf(p) });
    }
  }
  if (inventory.interfaceEndpoints.length > 0) traffic.push({ item: 'data processed by interface endpoints', unitUsd: prices?.privateLinkDataGb?.usd, unit: prices?.privateLinkDataGb?.unit, note: prices?.privateLinkDataGb ? undefined : unknown('PrivateLink data'), source: prices?.privateLinkDataGb && sourceOf(prices.privateLinkDataGb) });
  for (const t of traffic) if (t.source) sources.add(t.source);

  const knownMonthlyUsd = Math.round(lines.reduce((sum, l) => sum + (l.monthlyUsd ?? 0), 0) * 100) / 100;
  const unpriced = lines.filter((l) => l.monthlyUsd === undefined && !l.note?.startsWith('no line of its own')).map((l) => l.item);
  const engines = inventory.instanceClasses.length > 0 ? compareEngines(inventory, prices, region) : undefined;
  const storage = inventory.instanceClasses.length > 0 ? compareStorage(inventory, prices, region, options) : undefined;
  return {
    region,
    location: prices?.location,
    regionAssumed,
    pricesAsOf: PRICES_READ_ON,
    lines,
    trafficLines: traffic,
    knownMonthlyUsd,
    unpriced,
    engines,
    storage,
    sources: [...sources],
    footer: `prices as of ${PRICES_READ_ON}, on-demand, excluding data processed (${region}; ${HOURS_PER_MONTH} hours a month; not priced: Lambda, CloudWatch, KMS, Secrets Manager, backups, data transfer)`,
  };
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
  const rdsProxyMonthlyUsd = proxyRate === undefined ? undefined : monthly(proxyRate, Math.max(RDS_PROXY_MIN_VCPUS, vcpus) * HOURS_PER_MONTH);
  const fleetMonthlyUsd =
    hostHour === undefined || nlbHour === undefined || endpointHour === undefined
      ? undefined
      : monthly(1, (hosts * hostHour + nlbHour + endpointAzs * endpointHour) * HOURS_PER_MONTH);
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
    const hour = instanceHour(prices, cls, options);
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
  const ioOptimizedMonthlyUsd = monthly(1, ioInstances + (gb ?? 0) * ioStorage);
  const io = options.ioMillionsPerMonth;
  const standardMonthlyUsd = io === undefined ? undefined : monthly(1, ioInstances / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR + (gb ?? 0) * stdStorage + io * ioRate);
  const storageNote = gb === undefined ? ' (storage not counted: give --storage-gb)' : '';
  return {
    ioOptimizedMonthlyUsd,
    standardMonthlyUsd,
    breakEvenIoMillions,
    loses,
    summary: `instances ${Math.round((1 - 1 / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR) * 1000) / 10}% less, ${perGb}; it costs less than I/O-Optimized ($${ioOptimizedMonthlyUsd.toFixed(2)}/month${storageNote}) only below ${breakEvenIoMillions} million I/O requests a month${standardMonthlyUsd === undefined ? '' : `; at ${io} million: $${standardMonthlyUsd.toFixed(2)}/month`}`,
  };
}

const usd = (n: number): string => `$${n.toFixed(2)}`;
const unitPrice = (l: CostLine): string => (l.unitUsd === undefined ? '' : `$${l.unitUsd} per ${l.unit}`);

/** The estimate as the summaries print it, each line indented by `indent`. */
export function formatCostEstimate(estimate: CostEstimate, indent = '  '): string {
  const where = estimate.location ? `${estimate.region} (${estimate.location})` : `${estimate.region}, a Region the table has no prices for (it has ${Object.keys(PRICE_TABLE).join(', ')})`;
  const lines = [`${indent}Monthly cost estimate, ${where}${estimate.regionAssumed ? ': the deployment names no Region, priced there (give --region)' : ''}:`];
  const width = Math.max(...estimate.lines.map((l) => l.item.length), 0);
  for (const l of estimate.lines) {
    const figure = l.monthlyUsd === undefined ? '       n/a' : usd(l.monthlyUsd).padStart(10);
    const detail = [unitPrice(l), l.note].filter(Boolean).join('; ');
    lines.push(`${indent}  ${l.item.padEnd(width)}  ${figure}${detail ? `  ${detail}` : ''}`);
  }
  const partial = estimate.unpriced.length > 0 ? ` (without ${estimate.unpriced.length} line${estimate.unpriced.length > 1 ? 's' : ''} the table has no price or volume for)` : '';
  lines.push(`${indent}  ${'total'.padEnd(width)}  ${usd(estimate.knownMonthlyUsd).padStart(10)}${partial}`);
  for (const t of estimate.trafficLines) lines.push(`${indent}  + ${t.item}: ${t.unitUsd === undefined ? t.note : unitPrice(t)} (depends on traffic, not in the total)`);
  if (estimate.engines) {
    const e = estimate.engines;
    const fig = (n: number | undefined): string => (n === undefined ? 'n/a' : `${usd(n)}/month`);
    lines.push(`${indent}Engine: RDS Proxy ${fig(e.rdsProxyMonthlyUsd)} against the PgBouncer fleet ${fig(e.fleetMonthlyUsd)} (${e.fleetParts})`);
    lines.push(`${indent}  ${e.verdict}`);
  }
  if (estimate.storage) {
    lines.push(`${indent}Aurora Standard against the kit's I/O-Optimized: ${estimate.storage.summary}`);
    lines.push(`${indent}  Standard would lose ${estimate.storage.loses}`);
  }
  lines.push(`${indent}${estimate.footer}`);
  if (estimate.sources.length > 0) lines.push(`${indent}sources: ${estimate.sources.join('; ')} (prices.ts names how each figure was read)`);
  return lines.join('\n');
}
