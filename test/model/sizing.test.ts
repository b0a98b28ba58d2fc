import {
  DEFAULT_POOL_SETTINGS,
  INSTANCE_CLASS_CATALOG,
  MAX_CONNECTIONS_CAP,
  defaultMaxConnections,
  findInstanceClass,
  optimizedReadsSizing,
  poolSizing,
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
    // LEAST(32 GiB / 9531392, 5000) = LEAST(3604.9, 5000)
    expect(sizing.maxConnections).toBe(3604);
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
      expect(sizing.maxConnections).toBe(defaultMaxConnections(spec.memoryGiB));
    },
  );

  test('the tiered cache grows with the instance size', () => {
    const cache = (c: string) => optimizedReadsSizing(findInstanceClass(c)!).tieredCacheGiB;
    expect(cache('db.r6gd.2xlarge')).toBeGreaterThan(cache('db.r6gd.xlarge'));
    expect(cache('db.r6gd.16xlarge')).toBeGreaterThan(cache('db.r6gd.8xlarge'));
  });
});

describe('defaultMaxConnections', () => {
  test('LEAST(DBInstanceClassMemory / 9531392, 5000), floored', () => {
    expect(defaultMaxConnections(32)).toBe(3604);
    // 16 GiB would give 1802 (not in the catalog, but the formula is linear below the cap).
    expect(defaultMaxConnections(16)).toBe(1802);
    // The cap applies from 44.4 GiB (5000 * 9531392 bytes) up.
    expect(defaultMaxConnections(44)).toBe(4956);
    expect(defaultMaxConnections(45)).toBe(5000);
    expect(defaultMaxConnections(1536)).toBe(5000);
  });

  test('every catalog class above xlarge is at the cap', () => {
    const uncapped = INSTANCE_CLASS_CATALOG.filter((s) => defaultMaxConnections(s.memoryGiB) < MAX_CONNECTIONS_CAP);
    expect(uncapped.map((s) => s.size)).toEqual(['xlarge', 'xlarge', 'xlarge']);
  });
});

describe('poolSizing', () => {
  test('the defaults (100% / 50%) on db.r6gd.xlarge', () => {
    expect(DEFAULT_POOL_SETTINGS).toEqual({ maxConnectionsPercent: 100, maxIdleConnectionsPercent: 50, connectionBorrowTimeoutSeconds: 120 });
    expect(poolSizing(3604, DEFAULT_POOL_SETTINGS)).toEqual({ maxServerConnections: 3604, maxIdleServerConnections: 1802 });
  });

  test('percentages are floored, never rounded up past the budget', () => {
    // 3604 * 0.33 = 1189.32, 3604 * 0.9 = 3243.6
    expect(poolSizing(3604, { maxConnectionsPercent: 90, maxIdleConnectionsPercent: 33, connectionBorrowTimeoutSeconds: 0 })).toEqual({
      maxServerConnections: 3243,
      maxIdleServerConnections: 1189,
    });
    expect(poolSizing(5000, { maxConnectionsPercent: 1, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 0 })).toEqual({
      maxServerConnections: 50,
      maxIdleServerConnections: 0,
    });
  });

  test('idle never exceeds max when idle <= max percent', () => {
    for (let max = 1; max <= 100; max += 7) {
      for (let idle = 0; idle <= max; idle += 5) {
        const s = poolSizing(3604, { maxConnectionsPercent: max, maxIdleConnectionsPercent: idle, connectionBorrowTimeoutSeconds: 0 });
        expect(s.maxIdleServerConnections).toBeLessThanOrEqual(s.maxServerConnections);
        expect(s.maxServerConnections).toBeLessThanOrEqual(3604);
      }
    }
  });
});
