/**
 * The monthly cost of what a deployment runs, from the price table (prices.ts). One implementation for
 * both flavours: `synth summary` reads a cloud assembly and `plan summary` a Terraform plan into a
 * DeploymentInventory, and both print estimateCost's result with formatCostEstimate.
 *
 * Only what is billed per hour is priced. What depends on traffic (Aurora Standard I/O, NLB capacity
 * units, data processed by interface endpoints) is named with its unit price, or priced from a volume
 * the caller gives. Lambda, CloudWatch, KMS, Secrets Manager, backups and data transfer are not priced.
 */
import { compareEngines, compareStorage, type EngineComparison, type StorageComparison } from './cost-comparisons';
import { AURORA_STORAGE_STANDARD, type DeploymentInventory, clusterVcpus } from './cost-inventory';
import { type CostEstimateOptions, DEFAULT_ESTIMATE_REGION, instanceHourPrice, monthlyCost, priceSource, regionPrices, validateCostOptions } from './cost-pricing';
import { AURORA_IO_OPTIMIZED_INSTANCE_FACTOR, HOURS_PER_MONTH, PRICE_TABLE, PRICES_READ_ON, RDS_PROXY_MIN_VCPUS, type Price } from './prices';

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

const countBy = (items: ReadonlyArray<string>): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  return counts;
};

/** The monthly cost of the deployment's hourly resources, with what depends on traffic named. */
export function estimateCost(inventory: DeploymentInventory, options: CostEstimateOptions = {}): CostEstimate {
  validateCostOptions(options);
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
    add({ item, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthlyCost(p.usd, quantity), source: priceSource(p) });
  };
  const ioOptimized = inventory.storageType !== AURORA_STORAGE_STANDARD;

  // Aurora instances, by class.
  for (const [cls, n] of countBy(inventory.instanceClasses)) {
    const configuration = ioOptimized ? 'I/O-Optimized' : 'Standard';
    const item = `${n} x ${cls} (${configuration})`;
    const hour = instanceHourPrice(prices, cls, options);
    if (!hour) {
      add({ item, note: `${unknown(`${cls} instance-hour`)}: give it with --instance-price ${cls}=USD (${ioOptimized ? 'I/O-Optimized' : 'the I/O-Optimized price; Standard is that / ' + AURORA_IO_OPTIMIZED_INSTANCE_FACTOR})` });
      continue;
    }
    const usd = ioOptimized ? hour.usd : Math.round((hour.usd / AURORA_IO_OPTIMIZED_INSTANCE_FACTOR) * 10_000) / 10_000;
    const quantity = n * HOURS_PER_MONTH;
    add({ item, unitUsd: usd, unit: 'instance-hour', quantity, monthlyUsd: monthlyCost(usd, quantity), note: hour.source === 'given' ? 'price given, not from the table' : undefined, source: hour.source });
  }

  // Storage: per GB-month, and on Standard per I/O request too.
  if (inventory.storageType !== undefined || inventory.instanceClasses.length > 0) {
    const storage = ioOptimized ? prices?.auroraIoOptimizedStorageGbMonth : prices?.auroraStandardStorageGbMonth;
    const item = `cluster storage (${ioOptimized ? 'I/O-Optimized' : 'Standard'})`;
    if (!storage) add({ item, note: unknown('Aurora storage') });
    else if (options.storageGb === undefined) add({ item, unitUsd: storage.usd, unit: storage.unit, note: 'grows with the data: give its size with --storage-gb', source: priceSource(storage) });
    else add({ item, unitUsd: storage.usd, unit: storage.unit, quantity: options.storageGb, monthlyUsd: monthlyCost(storage.usd, options.storageGb), source: priceSource(storage) });
    if (!ioOptimized) {
      const io = prices?.auroraStandardIoPerMillion;
      if (!io) add({ item: 'I/O requests (Standard)', note: unknown('Aurora I/O') });
      else if (options.ioMillionsPerMonth === undefined) traffic.push({ item: 'I/O requests (Standard)', unitUsd: io.usd, unit: io.unit, source: priceSource(io) });
      else add({ item: 'I/O requests (Standard)', unitUsd: io.usd, unit: io.unit, quantity: options.ioMillionsPerMonth, monthlyUsd: monthlyCost(io.usd, options.ioMillionsPerMonth), source: priceSource(io) });
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
      add({ item: `${item} (${billed} vCPUs of the database's instances)`, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthlyCost(p.usd, quantity), source: priceSource(p) });
    }
    if (inventory.rdsProxyEndpoints > 0) add({ item: `${inventory.rdsProxyEndpoints} x RDS Proxy endpoint`, note: 'not priced here: the table has no figure of its own for proxy endpoints (see Amazon RDS Proxy pricing)' });
  }

  // The PgBouncer fleet: its hosts, the NLB, the endpoints.
  if (inventory.fleet) {
    const { hosts, instanceType } = inventory.fleet;
    hourly(`${hosts} x ${instanceType} (PgBouncer hosts)`, prices?.ec2InstanceHour[instanceType], hosts, `${instanceType} instance-hour`);
  }
  hourly(`${inventory.networkLoadBalancers} x Network Load Balancer`, prices?.nlbHour, inventory.networkLoadBalancers, 'NLB hour');
  if (inventory.networkLoadBalancers > 0) traffic.push({ item: 'NLB capacity units (new flows, active flows, bytes)', unitUsd: prices?.nlbNlcuHour?.usd, unit: prices?.nlbNlcuHour?.unit, note: prices?.nlbNlcuHour ? undefined : unknown('NLCU'), source: prices?.nlbNlcuHour && priceSource(prices.nlbNlcuHour) });
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
      add({ item, unitUsd: p.usd, unit: p.unit, quantity, monthlyUsd: monthlyCost(p.usd, quantity), note, source: priceSource(p) });
    }
  }
  if (inventory.interfaceEndpoints.length > 0) traffic.push({ item: 'data processed by interface endpoints', unitUsd: prices?.privateLinkDataGb?.usd, unit: prices?.privateLinkDataGb?.unit, note: prices?.privateLinkDataGb ? undefined : unknown('PrivateLink data'), source: prices?.privateLinkDataGb && priceSource(prices.privateLinkDataGb) });
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
