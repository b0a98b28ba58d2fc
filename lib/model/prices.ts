/**
 * On-demand list prices of what the kit deploys, per Region, for the cost estimate (cost-estimate.ts).
 *
 * Every figure names the AWS pricing page it comes from and how it was read: AWS's pricing pages render
 * their tables in the browser, so where the page's own table could not be read, the figure was read from
 * public material quoting that page (named in `readVia`) and checked against at least one other such
 * source. A figure that could not be found that way is absent: the estimate then prints the line without
 * a price and says so, rather than guessing. The kit's own Optimized Reads instance classes are such a
 * case: their hourly prices are given with `--instance-price` (or `instanceHourlyUsd`) until the table has them.
 *
 * Refresh: read each page again, update the figures and PRICES_READ_ON; a test fails once the table is a
 * year old.
 */

/** The date the figures below were read (YYYY-MM-DD). */
export const PRICES_READ_ON = '2026-11-26';

/** Hours in a month as AWS's pricing pages and calculator count them (24 x 365 / 12). */
export const HOURS_PER_MONTH = 730;

/** An AWS pricing page. */
export interface PricePage {
  readonly name: string;
  readonly url: string;
}

export const PRICE_PAGES = {
  aurora: { name: 'Amazon Aurora pricing', url: 'https://aws.amazon.com/rds/aurora/pricing/' },
  rdsProxy: { name: 'Amazon RDS Proxy pricing', url: 'https://aws.amazon.com/rds/proxy/pricing/' },
  ec2: { name: 'Amazon EC2 On-Demand pricing', url: 'https://aws.amazon.com/ec2/pricing/on-demand/' },
  elb: { name: 'Elastic Load Balancing pricing', url: 'https://aws.amazon.com/elasticloadbalancing/pricing/' },
  privateLink: { name: 'AWS PrivateLink pricing', url: 'https://aws.amazon.com/privatelink/pricing/' },
} as const satisfies Record<string, PricePage>;

/** One price: US dollars per unit, where it is written and how it was read. */
export interface Price {
  readonly usd: number;
  /** e.g. `hour`, `vCPU-hour`, `GB-month`, `million requests`. */
  readonly unit: string;
  readonly page: PricePage;
  /** How the figure was read: the page itself, or the public material quoting it, with its date. */
  readonly readVia: string;
}

/** A Region's prices; a missing figure is unknown for that Region. */
export interface RegionPrices {
  readonly region: string;
  readonly location: string;
  /** Aurora PostgreSQL on-demand instance-hour, I/O-Optimized configuration, by DB instance class. */
  readonly auroraIoOptimizedInstanceHour: Readonly<Record<string, Price>>;
  readonly auroraIoOptimizedStorageGbMonth?: Price;
  readonly auroraStandardStorageGbMonth?: Price;
  readonly auroraStandardIoPerMillion?: Price;
  /** Per vCPU of the database's instances, per hour (provisioned instances; at least RDS_PROXY_MIN_VCPUS). */
  readonly rdsProxyVcpuHour?: Price;
  /** EC2 Linux on-demand instance-hour, by instance type. */
  readonly ec2InstanceHour: Readonly<Record<string, Price>>;
  readonly nlbHour?: Price;
  readonly nlbNlcuHour?: Price;
  /** An interface VPC endpoint, per Availability Zone it is in, per hour. */
  readonly interfaceEndpointAzHour?: Price;
  /** Data processed by interface endpoints, first petabyte of the month in the Region. */
  readonly privateLinkDataGb?: Price;
}

/**
 * Aurora I/O-Optimized instances cost this many times their Aurora Standard price (Amazon Aurora pricing:
 * I/O-Optimized instance prices carry a 30% premium; read via AWS's agent-toolkit-for-aws database skills,
 * references/io-optimized-pricing.md, and nOps's "Switch Aurora Cluster to I/O-Optimized", both 2026).
 */
export const AURORA_IO_OPTIMIZED_INSTANCE_FACTOR = 1.3;

/** RDS Proxy bills provisioned instances for at least this many vCPUs (Amazon RDS Proxy pricing). */
export const RDS_PROXY_MIN_VCPUS = 2;

const QUOTED_2026 = (sources: string): string => `public material quoting the page, read ${PRICES_READ_ON}: ${sources}`;

const AURORA_STORAGE_VIA = QUOTED_2026('AWS\'s agent-toolkit-for-aws database skills (references/io-optimized-pricing.md, us-east-1 constants); CloudExMachina "AWS Aurora Pricing Explained" (Sep 2025)');
const PROXY_VIA = QUOTED_2026('cost notes in public repositories ("RDS Proxy: $0.015 per vCPU-hour of your RDS instance", several, 2025-2026)');
const EC2_VIA = QUOTED_2026('price books in public repositories (c7g.large 0.0725, several, 2024-2026); FactualMinds "Amazon EC2 On-Demand Pricing" (June 2026) for m7g.large 0.0816');
const NLB_VIA = QUOTED_2026('ClusterCost "AWS Network Load Balancer Pricing (US-East-1 2025 Guide)"; AWSNegotiations "AWS PrivateLink Cost Analysis" (May 2026); cost notes in public repositories ($0.006/NLCU-hour)');
const ENDPOINT_VIA = QUOTED_2026('AWSNegotiations "AWS PrivateLink Cost Analysis" (May 2026); CloudCostKit "AWS PrivateLink pricing"');
const PRIVATELINK_DATA_VIA = `the page itself (Interface Endpoint pricing table, "First 1 PB $0.01"), read ${PRICES_READ_ON}`;

const price = (usd: number, unit: string, page: PricePage, readVia: string): Price => ({ usd, unit, page, readVia });

export const PRICE_TABLE: Readonly<Record<string, RegionPrices>> = {
  'us-east-1': {
    region: 'us-east-1',
    location: 'US East (N. Virginia)',
    // Not found for the Optimized Reads classes (db.r6gd, db.r6id, db.r8gd) in what could be read; see the header.
    auroraIoOptimizedInstanceHour: {},
    auroraIoOptimizedStorageGbMonth: price(0.225, 'GB-month', PRICE_PAGES.aurora, AURORA_STORAGE_VIA),
    auroraStandardStorageGbMonth: price(0.1, 'GB-month', PRICE_PAGES.aurora, AURORA_STORAGE_VIA),
    auroraStandardIoPerMillion: price(0.2, 'million requests', PRICE_PAGES.aurora, AURORA_STORAGE_VIA),
    rdsProxyVcpuHour: price(0.015, 'vCPU-hour', PRICE_PAGES.rdsProxy, PROXY_VIA),
    ec2InstanceHour: {
      'c7g.large': price(0.0725, 'hour', PRICE_PAGES.ec2, EC2_VIA),
      'c7g.xlarge': price(0.145, 'hour', PRICE_PAGES.ec2, EC2_VIA),
      'm7g.large': price(0.0816, 'hour', PRICE_PAGES.ec2, EC2_VIA),
    },
    nlbHour: price(0.0225, 'hour', PRICE_PAGES.elb, NLB_VIA),
    nlbNlcuHour: price(0.006, 'NLCU-hour', PRICE_PAGES.elb, NLB_VIA),
    interfaceEndpointAzHour: price(0.01, 'endpoint-AZ-hour', PRICE_PAGES.privateLink, ENDPOINT_VIA),
    privateLinkDataGb: price(0.01, 'GB', PRICE_PAGES.privateLink, PRIVATELINK_DATA_VIA),
  },
  'eu-west-1': {
    region: 'eu-west-1',
    location: 'Europe (Ireland)',
    // No eu-west-1 figure could be read on the date above (the pages' Region selectors render in the
    // browser, and no public material quoting them was found): every line prints without a price.
    auroraIoOptimizedInstanceHour: {},
    ec2InstanceHour: {},
  },
};

/** The Regions the table has an entry for, in the order listed. */
export function pricedRegions(): string[] {
  return Object.keys(PRICE_TABLE);
}

/** Whole days from PRICES_READ_ON to `now`. */
export function priceTableAgeDays(now: Date, readOn: string = PRICES_READ_ON): number {
  return Math.floor((now.getTime() - Date.parse(`${readOn}T00:00:00Z`)) / 86_400_000);
}
