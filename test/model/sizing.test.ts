import {
  CONNECTION_RESERVE,
  DEFAULT_POOL_SETTINGS,
  INSTANCE_CLASS_CATALOG,
  MAX_CONNECTIONS_CAP,
  MAX_CONNECTIONS_DIVISOR,
  MAX_PUBLISHED_MEMORY_DEDUCTION,
  PUBLISHED_MAX_CONNECTIONS,
  RESERVED_CONNECTIONS,
  auroraMaxConnections,
  catalogMaxConnectionsPercentLeavingReserve,
  defaultMaxConnections,
  findInstanceClass,
  maxConnectionsFormula,
  maxConnectionsPercentLeavingReserve,
  nominalMaxConnections,
  optimizedReadsSizing,
  poolSizing,
  proxyPoolSettings,
} from '../../lib/model';

/** 1 GB (decimal, as EC2 lists NVMe) in GiB. */
const GIB_PER_GB = 1e9 / 2 ** 30;

describe('optimizedReadsSizing', () => {
  test('db.r6gd.xlarge: 237 GB NVMe = 220.7 GiB, 64 GiB temporary objects, ~22 GiB internal, the rest tiered cache', () => {
    // GIVEN
    const spec = findInstanceClass('db.r6gd.xlarge')!;
    // WHEN
    const sizing = optimizedReadsSizing(spec);
    // THEN
    expect(sizing.instanceClass).toBe('db.r6gd.xlarge');
    expect(sizing.nvmeGiB).toBeCloseTo(220.7, 1);
    // Twice the 32 GiB of memory.
    expect(sizing.temporaryObjectsGiB).toBe(64);
    // About 10% of the NVMe.
    expect(sizing.internalGiB).toBeCloseTo(22.07, 1);
    expect(sizing.tieredCacheGiB).toBeCloseTo(220.72 - 22.07 - 64, 1);
    // Not the 3604 of the formula on 32 GiB: AWS publishes 3479 for db.r6g.xlarge (same Graviton2, same 32 GiB).
    expect(sizing.maxConnections).toBe(3479);
    expect(sizing.maxConnectionsBasis).toBe('published-same-memory');
  });

  test('db.r6gd.8xlarge: 1900 GB NVMe, 512 GiB temporary objects, max_connections capped at 5000', () => {
    // GIVEN
    const spec = findInstanceClass('db.r6gd.8xlarge')!;
    // WHEN
    const sizing = optimizedReadsSizing(spec);
    // THEN
    expect(sizing.nvmeGiB).toBeCloseTo(1900 * GIB_PER_GB, 1);
    expect(sizing.temporaryObjectsGiB).toBe(2 * 256);
    expect(sizing.internalGiB).toBeCloseTo(0.1 * 1900 * GIB_PER_GB, 1);
    expect(sizing.tieredCacheGiB).toBeCloseTo(0.9 * 1900 * GIB_PER_GB - 512, 1);
    // 256 GiB / 9531392 = 28839 > 5000
    expect(sizing.maxConnections).toBe(MAX_CONNECTIONS_CAP);
    expect(MAX_CONNECTIONS_CAP).toBe(5000);
  });

  test.each(INSTANCE_CLASS_CATALOG.map((s) => [s.instanceClass, s] as const))(
    '%s: temporary objects are 2x memory and the parts add up to the NVMe within rounding',
    (_name, spec) => {
      // WHEN
      const sizing = optimizedReadsSizing(spec);
      // THEN
      expect(sizing.nvmeGiB).toBeCloseTo(spec.nvmeGB * GIB_PER_GB, 1);
      expect(sizing.temporaryObjectsGiB).toBe(2 * spec.memoryGiB);
      expect(sizing.internalGiB / sizing.nvmeGiB).toBeCloseTo(0.1, 2);
      expect(sizing.tieredCacheGiB).toBeGreaterThan(0);
      // Each part is rounded to 0.1 GiB, so the sum may be off by up to 0.15.
      const sum = sizing.temporaryObjectsGiB + sizing.internalGiB + sizing.tieredCacheGiB;
      expect(Math.abs(sum - sizing.nvmeGiB)).toBeLessThanOrEqual(0.15 + 1e-9);
      expect(sizing.maxConnections).toBe(defaultMaxConnections(spec));
      expect(sizing.maxConnections).toBeLessThanOrEqual(nominalMaxConnections(spec.memoryGiB));
    },
  );

  test('the tiered cache grows with the instance size', () => {
    const cache = (c: string) => optimizedReadsSizing(findInstanceClass(c)!).tieredCacheGiB;
    expect(cache('db.r6gd.2xlarge')).toBeGreaterThan(cache('db.r6gd.xlarge'));
    expect(cache('db.r6gd.16xlarge')).toBeGreaterThan(cache('db.r6gd.8xlarge'));
  });
});

/** The AWS behaviours these tests exercise (docs/AWS-RULES.md): aurora-pg-max-connections, aurora-pg-reserved-connections, proxy-max-connections-percent. */
describe('auroraMaxConnections', () => {
  test('the formula: LEAST(DBInstanceClassMemory / 9531392, 5000), floored', () => {
    expect(MAX_CONNECTIONS_DIVISOR).toBe(9531392);
    expect(maxConnectionsFormula(3479 * 9531392)).toBe(3479);
    expect(maxConnectionsFormula(3480 * 9531392 - 1)).toBe(3479);
    // On nominal memory, as the kit used to: 32 GiB gives 3604, the cap applies from 44.4 GiB.
    expect(nominalMaxConnections(32)).toBe(3604);
    expect(nominalMaxConnections(44)).toBe(4956);
    expect(nominalMaxConnections(45)).toBe(5000);
  });

  test('AWS\'s published values sit below the formula on nominal memory: DBInstanceClassMemory is less than the memory', () => {
    for (const row of PUBLISHED_MAX_CONNECTIONS) expect(row.maxConnections).toBeLessThan(nominalMaxConnections(row.memoryGiB));
    // db.r5.large: 1600 of 1802 is the largest shortfall the table shows.
    expect(MAX_PUBLISHED_MEMORY_DEDUCTION).toBeCloseTo(1 - 1600 / 1802, 6);
  });

  test('a class AWS lists gets AWS\'s value', () => {
    expect(auroraMaxConnections({ instanceClass: 'db.r6g.xlarge', memoryGiB: 32, family: 'r6gd' })).toEqual({ maxConnections: 3479, basis: 'published', publishedFor: 'db.r6g.xlarge' });
  });

  test.each([
    ['db.r6gd.xlarge', 3479, 'db.r6g.xlarge'],
    ['db.r8gd.xlarge', 3479, 'db.r6g.xlarge'],
    // x86_64: db.r5.xlarge's 3300, the only published 32 GiB Intel row.
    ['db.r6id.xlarge', 3300, 'db.r5.xlarge'],
  ])('%s: %i, published for %s (same memory and architecture)', (instanceClass, maxConnections, publishedFor) => {
    // WHEN
    const result = auroraMaxConnections(findInstanceClass(instanceClass)!);
    // THEN
    expect(result).toEqual({ maxConnections, basis: 'published-same-memory', publishedFor });
  });

  test('every catalog class above xlarge is at the cap even with the largest published deduction', () => {
    const uncapped = INSTANCE_CLASS_CATALOG.filter((s) => auroraMaxConnections(s).basis !== 'capped');
    expect(uncapped.map((s) => s.size)).toEqual(['xlarge', 'xlarge', 'xlarge']);
    for (const spec of INSTANCE_CLASS_CATALOG.filter((s) => s.size !== 'xlarge')) {
      expect(maxConnectionsFormula(spec.memoryGiB * 2 ** 30 * (1 - MAX_PUBLISHED_MEMORY_DEDUCTION))).toBe(MAX_CONNECTIONS_CAP);
    }
  });

  test('a class with nothing published of its memory and architecture is deduced from the largest published shortfall', () => {
    // GIVEN 24 GiB: no published row has it
    const result = auroraMaxConnections({ instanceClass: 'db.r6gd.hypothetical', memoryGiB: 24, family: 'r6gd' });
    // THEN below the nominal 2703
    expect(result.basis).toBe('deduced');
    expect(result.maxConnections).toBe(Math.floor((24 * 2 ** 30 * (1 - MAX_PUBLISHED_MEMORY_DEDUCTION)) / MAX_CONNECTIONS_DIVISOR));
    expect(result.maxConnections).toBeLessThan(nominalMaxConnections(24));
  });
});

describe('the connection reserve', () => {
  test('rdsadmin\'s and rds_superuser\'s reserved slots, AWS\'s automation, the master user and the role bootstrap: 10', () => {
    expect(CONNECTION_RESERVE.map((p) => [p.id, p.connections])).toEqual([
      ['superuser-reserved', 3],
      ['rds-superuser-reserved', 2],
      ['aws-automation', 3],
      ['master-user', 1],
      ['role-bootstrap', 1],
    ]);
    expect(RESERVED_CONNECTIONS).toBe(10);
    for (const part of CONNECTION_RESERVE) expect(part.source).not.toBe('');
  });

  test('the largest percent that leaves it: 99 on every catalog class', () => {
    expect(maxConnectionsPercentLeavingReserve(3479)).toBe(99);
    expect(maxConnectionsPercentLeavingReserve(5000)).toBe(99);
    // A small custom max_connections leaves less room for the percent.
    expect(maxConnectionsPercentLeavingReserve(100)).toBe(90);
    expect(maxConnectionsPercentLeavingReserve(10)).toBe(0);
    expect(catalogMaxConnectionsPercentLeavingReserve()).toBe(99);
  });
});

describe('poolSizing', () => {
  test('the defaults (100% / 5%) on db.r6gd.xlarge: max_connections 3479 less the reserve of 10', () => {
    expect(DEFAULT_POOL_SETTINGS).toEqual({ maxConnectionsPercent: 100, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 });
    expect(poolSizing(3479, DEFAULT_POOL_SETTINGS)).toEqual({ maxServerConnections: 3469, maxIdleServerConnections: 173, reservedConnections: 10 });
  });

  test('percentages are floored, never rounded up past the budget', () => {
    // 3604 * 0.33 = 1189.32, 3604 * 0.9 = 3243.6
    expect(poolSizing(3604, { maxConnectionsPercent: 90, maxIdleConnectionsPercent: 33, connectionBorrowTimeoutSeconds: 0 })).toEqual({
      maxServerConnections: 3243,
      maxIdleServerConnections: 1189,
      reservedConnections: 10,
    });
    expect(poolSizing(5000, { maxConnectionsPercent: 1, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 0 })).toEqual({
      maxServerConnections: 50,
      maxIdleServerConnections: 0,
      reservedConnections: 10,
    });
  });

  test('every pool of every catalog class leaves the reserve, whatever the percentages', () => {
    const overruns: string[] = [];
    for (const spec of INSTANCE_CLASS_CATALOG) {
      const maxConnections = defaultMaxConnections(spec);
      for (let max = 1; max <= 100; max++) {
        for (let idle = 0; idle <= 100; idle += 5) {
          const s = poolSizing(maxConnections, { maxConnectionsPercent: max, maxIdleConnectionsPercent: idle, connectionBorrowTimeoutSeconds: 0 });
          if (s.maxServerConnections > maxConnections - RESERVED_CONNECTIONS || s.maxIdleServerConnections > s.maxServerConnections) overruns.push(`${spec.instanceClass} ${max}/${idle}`);
        }
      }
    }
    expect(overruns).toEqual([]);
  });

  test('a max_connections at or below the reserve leaves the pool nothing', () => {
    expect(poolSizing(10, DEFAULT_POOL_SETTINGS).maxServerConnections).toBe(0);
    expect(poolSizing(5, DEFAULT_POOL_SETTINGS).maxServerConnections).toBe(0);
  });
});

describe('proxyPoolSettings', () => {
  test('RDS Proxy is given at most the percent that leaves the reserve, so what it opens is poolSizing\'s number', () => {
    // GIVEN the defaults on db.r6gd.xlarge
    const given = proxyPoolSettings(3479, DEFAULT_POOL_SETTINGS);
    // THEN 99%: floor(3479 * 0.99) = 3444, which leaves 35 >= 10
    expect(given).toEqual({ maxConnectionsPercent: 99, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 });
    const opens = Math.floor((3479 * given.maxConnectionsPercent) / 100);
    expect(opens).toBe(3444);
    expect(poolSizing(3479, given).maxServerConnections).toBe(opens);
  });

  test('a lower percent is kept; the idle share never exceeds the percent given', () => {
    expect(proxyPoolSettings(5000, { maxConnectionsPercent: 60, maxIdleConnectionsPercent: 50, connectionBorrowTimeoutSeconds: 0 }).maxConnectionsPercent).toBe(60);
    expect(proxyPoolSettings(100, { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 95, connectionBorrowTimeoutSeconds: 0 })).toEqual({
      maxConnectionsPercent: 90,
      maxIdleConnectionsPercent: 90,
      connectionBorrowTimeoutSeconds: 0,
    });
  });

  test.each(INSTANCE_CLASS_CATALOG.map((s) => [s.instanceClass, s] as const))('%s: what RDS Proxy opens with any percent leaves the reserve', (_name, spec) => {
    const maxConnections = defaultMaxConnections(spec);
    for (let max = 1; max <= 100; max++) {
      const given = proxyPoolSettings(maxConnections, { maxConnectionsPercent: max, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 0 });
      expect(Math.floor((maxConnections * given.maxConnectionsPercent) / 100)).toBeLessThanOrEqual(maxConnections - RESERVED_CONNECTIONS);
    }
  });
});
