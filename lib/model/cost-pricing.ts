/**
 * Unit prices as the cost estimate reads them: the caller's options over the price table (prices.ts), in
 * the deployment's Region or the one given, and the monthly figure of a unit price.
 */
import { PRICE_TABLE, type PricePage, type RegionPrices } from './prices';

/** Where an estimate prices a deployment that names no Region (a region-agnostic CDK stack). */
export const DEFAULT_ESTIMATE_REGION = 'us-east-1';

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

/** A cost option that cannot be used. */
export class CostOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CostOptionError';
  }
}

/** USD a month of `quantity` units at `unitUsd`, to the cent. */
export const monthlyCost = (unitUsd: number, quantity: number): number => Math.round(unitUsd * quantity * 100) / 100;
/** The page a price was read from, as the estimate cites it. */
export const priceSource = (p: { readonly page: PricePage }): string => p.page.name;

/** The table's prices for a Region; undefined when it has none. */
export function regionPrices(region: string): RegionPrices | undefined {
  return PRICE_TABLE[region];
}

/** I/O-Optimized instance-hour for a class: the caller's, else the table's. */
export function instanceHourPrice(prices: RegionPrices | undefined, cls: string, options: CostEstimateOptions): { usd: number; source: string } | undefined {
  const given = options.instanceHourlyUsd?.[cls];
  if (given !== undefined) return { usd: given, source: 'given' };
  const p = prices?.auroraIoOptimizedInstanceHour[cls];
  return p ? { usd: p.usd, source: priceSource(p) } : undefined;
}

/** Refuses an option no estimate can use, naming it, its value and the fix. */
export function validateCostOptions(options: CostEstimateOptions): void {
  for (const [cls, usd] of Object.entries(options.instanceHourlyUsd ?? {})) {
    if (!Number.isFinite(usd) || usd <= 0) throw new CostOptionError(`instance price ${cls}=${usd} is not a positive number of USD per hour: pass e.g. ${cls}=0.5`);
  }
  for (const [name, value] of [['storageGb', options.storageGb], ['ioMillionsPerMonth', options.ioMillionsPerMonth]] as const) {
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) throw new CostOptionError(`${name} ${value} is not a number of 0 or more: pass e.g. 100`);
  }
}
