import {
  AURORA_STORAGE_STANDARD,
  CostOptionError,
  HOURS_PER_MONTH,
  PRICE_TABLE,
  PRICES_READ_ON,
  type DeploymentInventory,
  estimateCost,
  findInstanceClass,
  formatCostEstimate,
  optimizedReadsSizing,
  priceTableAgeDays,
} from '../../lib/model';

/**
 * The cost estimate both summaries print. The AWS behaviours these tests exercise (docs/AWS-RULES.md):
 * rds-proxy-billed-per-database-vcpu, interface-endpoint-billed-per-az-hour, tiered-cache-needs-io-optimized.
 */

/** The reference deployment with RDS Proxy as `synth summary` reads it: writer + 2 readers, one proxy with two endpoints. */
const RDS_PROXY_DEPLOYMENT: DeploymentInventory = {
  region: 'us-east-1',
  storageType: 'aurora-iopt1',
  instanceClasses: ['db.r6gd.xlarge', 'db.r6gd.xlarge', 'db.r6gd.xlarge'],
  rdsProxies: 1,
  rdsProxyEndpoints: 2,
  networkLoadBalancers: 0,
  interfaceEndpoints: [{ service: 'secretsmanager', pooler: false, azs: 2 }],
};

/** The same cluster with the PgBouncer engine: 2 c7g.large hosts, an NLB, two endpoints of its service in 2 AZs. */
const FLEET_DEPLOYMENT: DeploymentInventory = {
  ...RDS_PROXY_DEPLOYMENT,
  rdsProxies: 0,
  rdsProxyEndpoints: 0,
  fleet: { hosts: 2, instanceType: 'c7g.large' },
  networkLoadBalancers: 1,
  interfaceEndpoints: [
    { service: 'PgBouncer', pooler: true, azs: 2 },
    { service: 'PgBouncer', pooler: true, azs: 2 },
    { service: 'secretsmanager', pooler: false, azs: 2 },
  ],
};

const line = (estimate: ReturnType<typeof estimateCost>, start: string) => estimate.lines.find((l) => l.item.startsWith(start));

describe('the price table', () => {
  test('was read less than a year ago (release check)', () => {
    // GIVEN the date the table's figures were read, WHEN today is compared with it
    const age = priceTableAgeDays(new Date());
    // THEN it is under a year; past that, whoever releases refreshes the figures
    if (age > 365) {
      throw new Error(`lib/model/prices.ts was read on ${PRICES_READ_ON}, ${age} days ago: before releasing, read each price again from the pages it names, update the figures and PRICES_READ_ON`);
    }
    expect(age).toBeGreaterThanOrEqual(0);
  });

  test('the age check counts whole days, so a year and a day fails it', () => {
    expect(priceTableAgeDays(new Date('2027-11-27T12:00:00Z'), '2026-11-26')).toBe(366);
    expect(priceTableAgeDays(new Date('2026-11-26T23:00:00Z'), '2026-11-26')).toBe(0);
  });

  test('every figure names its AWS pricing page and how it was read', () => {
    for (const region of Object.values(PRICE_TABLE)) {
      const prices = [
        ...Object.values(region.auroraIoOptimizedInstanceHour),
        ...Object.values(region.ec2InstanceHour),
        ...[region.auroraIoOptimizedStorageGbMonth, region.auroraStandardStorageGbMonth, region.auroraStandardIoPerMillion, region.rdsProxyVcpuHour, region.nlbHour, region.nlbNlcuHour, region.interfaceEndpointAzHour, region.privateLinkDataGb].filter((p) => p !== undefined),
      ];
      for (const p of prices) {
        expect([region.region, p.page.url]).toEqual([region.region, expect.stringMatching(/^https:\/\/aws\.amazon\.com\//)]);
        expect(p.readVia).toContain(PRICES_READ_ON);
        expect(p.usd).toBeGreaterThan(0);
      }
    }
  });
});

describe('estimateCost', () => {
  test('the RDS Proxy deployment, recomputed by hand from the table', () => {
    // GIVEN the table's us-east-1 figures this computation uses
    const t = PRICE_TABLE['us-east-1']!;
    expect([t.rdsProxyVcpuHour?.usd, t.interfaceEndpointAzHour?.usd, t.auroraIoOptimizedStorageGbMonth?.usd]).toEqual([0.015, 0.01, 0.225]);
    // WHEN the instances' price is given (the table has none for db.r6gd) and the volume is 100 GB
    const estimate = estimateCost(RDS_PROXY_DEPLOYMENT, { instanceHourlyUsd: { 'db.r6gd.xlarge': 0.9 }, storageGb: 100 });
    // THEN instances: 3 x 0.9 x 730 = 1971.00
    expect(line(estimate, '3 x db.r6gd.xlarge')?.monthlyUsd).toBe(1971);
    // storage: 100 GB x 0.225 = 22.50
    expect(line(estimate, 'cluster storage')?.monthlyUsd).toBe(22.5);
    // RDS Proxy: 3 x 4 vCPUs = 12 vCPUs x 0.015 x 730 = 131.40
    expect(line(estimate, '1 x RDS Proxy')).toMatchObject({ item: '1 x RDS Proxy (12 vCPUs of the database\'s instances)', monthlyUsd: 131.4 });
    // one Secrets Manager endpoint in 2 AZs: 2 x 0.01 x 730 = 14.60
    expect(line(estimate, '1 x interface endpoint')?.monthlyUsd).toBe(14.6);
    // total 1971 + 22.5 + 131.4 + 14.6; the proxy endpoints are named, without a figure
    expect(estimate.knownMonthlyUsd).toBe(2139.5);
    expect(estimate.unpriced).toEqual(['2 x RDS Proxy endpoint']);
    expect(estimate.trafficLines.map((l) => [l.item, l.unitUsd])).toEqual([['data processed by interface endpoints', 0.01]]);
    expect(formatCostEstimate(estimate)).toContain(`prices as of ${PRICES_READ_ON}, on-demand, excluding data processed (us-east-1; 730 hours a month;`);
  });

  test('the PgBouncer deployment: hosts, NLB and endpoints per AZ, NLB capacity units named with their unit price', () => {
    // WHEN
    const estimate = estimateCost(FLEET_DEPLOYMENT);
    // THEN hosts 2 x 0.0725 x 730 = 105.85; NLB 0.0225 x 730 = 16.425, billed 16.43
    expect(line(estimate, '2 x c7g.large')?.monthlyUsd).toBe(105.85);
    expect(line(estimate, '1 x Network Load Balancer')?.monthlyUsd).toBe(16.43);
    // the service's two endpoints in 2 AZs each: 4 x 0.01 x 730 = 29.20
    expect(line(estimate, '2 x interface endpoint, PgBouncer endpoint service (4 endpoint-AZs)')?.monthlyUsd).toBe(29.2);
    expect(estimate.trafficLines.map((l) => `${l.item} ${l.unitUsd} ${l.unit}`)).toEqual(['NLB capacity units (new flows, active flows, bytes) 0.006 NLCU-hour', 'data processed by interface endpoints 0.01 GB']);
    // the instances have no price in the table: the line says so and the total leaves it out
    expect(line(estimate, '3 x db.r6gd.xlarge')?.monthlyUsd).toBeUndefined();
    expect(line(estimate, '3 x db.r6gd.xlarge')).toMatchObject({ note: expect.stringMatching(/no db\.r6gd\.xlarge instance-hour price for us-east-1 in the table .*--instance-price db\.r6gd\.xlarge=USD/) });
    expect(estimate.unpriced).toEqual(['3 x db.r6gd.xlarge (I/O-Optimized)', 'cluster storage (I/O-Optimized)']);
  });

  test('interface-endpoint-billed-per-az-hour: an endpoint in 3 AZs bills 3 endpoint-hours an hour', () => {
    const estimate = estimateCost({ ...RDS_PROXY_DEPLOYMENT, interfaceEndpoints: [{ service: 'secretsmanager', pooler: false, azs: 3 }] });
    expect(line(estimate, '1 x interface endpoint')).toMatchObject({ quantity: 3 * HOURS_PER_MONTH, monthlyUsd: 21.9 });
  });

  test('rds-proxy-billed-per-database-vcpu: vCPUs of every instance, at least 2', () => {
    // GIVEN a writer and 5 readers of db.r6gd.2xlarge (8 vCPUs each)
    const big = estimateCost({ ...RDS_PROXY_DEPLOYMENT, rdsProxyEndpoints: 0, instanceClasses: Array(6).fill('db.r6gd.2xlarge') });
    // THEN 48 vCPUs x 0.015 x 730 = 525.60
    expect(line(big, '1 x RDS Proxy')).toMatchObject({ item: '1 x RDS Proxy (48 vCPUs of the database\'s instances)', monthlyUsd: 525.6 });
    // GIVEN no instance yet, THEN the 2-vCPU minimum: 2 x 0.015 x 730 = 21.90
    const empty = estimateCost({ ...RDS_PROXY_DEPLOYMENT, rdsProxyEndpoints: 0, instanceClasses: [] });
    expect(line(empty, '1 x RDS Proxy')?.monthlyUsd).toBe(21.9);
  });

  test('a Region the table has no figures for: every line says so, none is guessed', () => {
    // WHEN
    const estimate = estimateCost(FLEET_DEPLOYMENT, { region: 'eu-west-1' });
    // THEN
    expect(estimate.knownMonthlyUsd).toBe(0);
    expect(estimate.lines.filter((l) => l.monthlyUsd !== undefined)).toEqual([]);
    expect(line(estimate, '2 x c7g.large')?.note).toBe('no c7g.large instance-hour price for eu-west-1 in the table (prices.ts)');
    expect(estimate.engines?.verdict).toMatch(/^not comparable in eu-west-1: the table lacks the RDS Proxy price and a price of the fleet/);
  });

  test('a deployment that names no Region is priced in us-east-1 and says so', () => {
    const estimate = estimateCost({ ...RDS_PROXY_DEPLOYMENT, region: undefined });
    expect([estimate.region, estimate.regionAssumed]).toEqual(['us-east-1', true]);
    expect(formatCostEstimate(estimate)).toContain('the deployment names no Region, priced there (give --region)');
  });

  test.each([
    ['a negative instance price', { instanceHourlyUsd: { 'db.r6gd.xlarge': -1 } }, 'instance price db.r6gd.xlarge=-1 is not a positive number of USD per hour: pass e.g. db.r6gd.xlarge=0.5'],
    ['a volume that is not a number', { storageGb: Number.NaN }, 'storageGb NaN is not a number of 0 or more: pass e.g. 100'],
  ])('%s: an error naming it, its value and the fix', (_, options, message) => {
    expect(() => estimateCost(RDS_PROXY_DEPLOYMENT, options)).toThrow(new CostOptionError(message));
  });
});

describe('the engine decision', () => {
  test('RDS Proxy against the fleet for the same cluster, and where they cross', () => {
    // WHEN
    const { engines } = estimateCost(RDS_PROXY_DEPLOYMENT);
    // THEN the fleet by the kit's defaults: 2 x 0.0725 x 730 + 0.0225 x 730 + 4 endpoint-AZs x 0.01 x 730 = 105.85 + 16.425 + 29.2
    expect(engines?.fleetMonthlyUsd).toBe(151.48);
    expect(engines?.rdsProxyMonthlyUsd).toBe(131.4);
    // RDS Proxy costs 0.015 x 730 = 10.95 a vCPU a month: they cross at 151.475 / 10.95 = 13.8 vCPUs, a 4th db.r6gd.xlarge
    expect(engines?.crossoverVcpus).toBe(13.8);
    expect(engines?.crossoverInstances).toBe(4);
    expect(engines?.verdict).toBe('for this cluster (12 vCPUs) RDS Proxy costs less; RDS Proxy costs less below 13.8 vCPUs; from 4 x db.r6gd.xlarge (writer + 3 readers) the fleet costs less');
    // the same comparison from the fleet's side
    expect(estimateCost(FLEET_DEPLOYMENT).engines).toEqual(engines);
  });

  test('a bigger cluster tips it to the fleet', () => {
    const { engines } = estimateCost({ ...RDS_PROXY_DEPLOYMENT, instanceClasses: Array(4).fill('db.r6gd.2xlarge') });
    expect(engines?.verdict).toMatch(/^for this cluster \(32 vCPUs\) the PgBouncer fleet costs less; .*from 2 x db\.r6gd\.2xlarge \(writer \+ 1 readers\)/);
  });
});

describe('Aurora Standard against I/O-Optimized', () => {
  test('tiered-cache-needs-io-optimized: Standard would lose the tiered cache, priced at the break-even I/O volume', () => {
    // WHEN
    const { storage } = estimateCost(RDS_PROXY_DEPLOYMENT, { instanceHourlyUsd: { 'db.r6gd.xlarge': 0.9 }, storageGb: 100, ioMillionsPerMonth: 1000 });
    // THEN it names the cache it loses, per instance
    const cache = optimizedReadsSizing(findInstanceClass('db.r6gd.xlarge')!).tieredCacheGiB;
    expect(storage?.loses).toContain(`the tiered cache (${cache} GiB per db.r6gd.xlarge)`);
    // I/O-Optimized: 1971 + 22.50 = 1993.50; Standard saves 1971 x 0.3/1.3 = 454.85 on instances and 100 x 0.125 = 12.50 on storage,
    // which pays for (454.85 + 12.50) / 0.20 = 2336.7 million I/O requests a month
    expect(storage?.ioOptimizedMonthlyUsd).toBe(1993.5);
    expect(storage?.breakEvenIoMillions).toBe(2336.7);
    // at 1000 million: 1971 / 1.3 + 100 x 0.10 + 1000 x 0.20 = 1516.15 + 10 + 200
    expect(storage?.standardMonthlyUsd).toBe(1726.15);
  });

  test('a Standard cluster is priced as Standard: instances at 1/1.3 of the given I/O-Optimized price, I/O requests named', () => {
    const estimate = estimateCost({ ...RDS_PROXY_DEPLOYMENT, storageType: AURORA_STORAGE_STANDARD }, { instanceHourlyUsd: { 'db.r6gd.xlarge': 1.3 } });
    expect(line(estimate, '3 x db.r6gd.xlarge (Standard)')).toMatchObject({ unitUsd: 1, monthlyUsd: 2190 });
    expect(estimate.trafficLines.map((l) => [l.item, l.unitUsd])).toContainEqual(['I/O requests (Standard)', 0.2]);
  });
});
