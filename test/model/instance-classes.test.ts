import {
  INSTANCE_CLASS_CATALOG,
  OPTIMIZED_READS_CLASS_NAMES,
  OPTIMIZED_READS_FAMILIES,
  OptimizedReadsFamily,
  checkInstanceClass,
  findInstanceClass,
  isOptimizedReadsFamily,
  parseInstanceClass,
  sizesOf,
} from '../../lib/model';

/** vCPUs of an EC2 size name: `xlarge` is 4, `Nxlarge` is 4N (the r-family convention). */
function vcpuOfSize(size: string): number {
  const match = /^(\d*)xlarge$/.exec(size);
  if (!match) throw new Error(`unexpected size ${size}`);
  return 4 * (match[1] === '' ? 1 : Number(match[1]));
}

const FAMILIES = Object.keys(OPTIMIZED_READS_FAMILIES) as OptimizedReadsFamily[];

describe('instance-class catalog', () => {
  test('the Optimized Reads families are exactly r6gd, r6id and r8gd', () => {
    // THEN
    expect([...FAMILIES].sort()).toEqual(['r6gd', 'r6id', 'r8gd']);
    expect(new Set(INSTANCE_CLASS_CATALOG.map((s) => s.family))).toEqual(new Set(['r6gd', 'r6id', 'r8gd']));
    expect(OPTIMIZED_READS_FAMILIES.r6id.architecture).toBe('x86_64');
    expect(OPTIMIZED_READS_FAMILIES.r6gd.architecture).toBe('arm64');
    expect(OPTIMIZED_READS_FAMILIES.r8gd.architecture).toBe('arm64');
  });

  test.each(INSTANCE_CLASS_CATALOG.map((s) => [s.instanceClass, s] as const))('%s parses and validates', (name, spec) => {
    // WHEN
    const parsed = parseInstanceClass(name);
    // THEN
    expect(parsed).toEqual({ family: spec.family, size: spec.size });
    expect(name).toBe(`db.${spec.family}.${spec.size}`);
    expect(isOptimizedReadsFamily(spec.family)).toBe(true);
    expect(findInstanceClass(name)).toBe(spec);
    expect(checkInstanceClass(name)).toBeUndefined();
  });

  test.each(INSTANCE_CLASS_CATALOG.map((s) => [s.instanceClass, s] as const))(
    '%s: vCPU follows the size name and memory is 8 GiB per vCPU',
    (_name, spec) => {
      expect(spec.vcpu).toBe(vcpuOfSize(spec.size));
      expect(spec.memoryGiB).toBe(8 * spec.vcpu);
      expect(spec.nvmeGB).toBeGreaterThan(0);
    },
  );

  test.each(FAMILIES)('%s: sizes are listed smallest first and NVMe grows with size', (family) => {
    // GIVEN
    const specs = INSTANCE_CLASS_CATALOG.filter((s) => s.family === family);
    // THEN
    expect(sizesOf(family)).toEqual(specs.map((s) => s.size));
    for (let i = 1; i < specs.length; i++) {
      expect(specs[i].vcpu).toBeGreaterThan(specs[i - 1].vcpu);
      expect(specs[i].nvmeGB).toBeGreaterThan(specs[i - 1].nvmeGB);
    }
  });

  test('no instance class is listed twice, and Aurora offers no `large` on these families', () => {
    const names = INSTANCE_CLASS_CATALOG.map((s) => s.instanceClass);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => n.endsWith('.large'))).toEqual([]);
    expect(OPTIMIZED_READS_CLASS_NAMES).toEqual(names);
  });

  test('known values from the EC2 instance-store specifications', () => {
    // 1 x 237 GB NVMe, 4 vCPU, 32 GiB
    expect(findInstanceClass('db.r6gd.xlarge')).toMatchObject({ vcpu: 4, memoryGiB: 32, nvmeGB: 237 });
    // 2 x 1900 GB
    expect(findInstanceClass('db.r6gd.16xlarge')).toMatchObject({ vcpu: 64, memoryGiB: 512, nvmeGB: 3800 });
    // 4 x 1900 GB
    expect(findInstanceClass('db.r6id.32xlarge')).toMatchObject({ vcpu: 128, memoryGiB: 1024, nvmeGB: 7600 });
    // 6 x 1900 GB
    expect(findInstanceClass('db.r8gd.48xlarge')).toMatchObject({ vcpu: 192, memoryGiB: 1536, nvmeGB: 11400 });
  });

  test('lookups reject classes outside the catalog', () => {
    expect(findInstanceClass('db.r6g.xlarge')).toBeUndefined();
    expect(findInstanceClass('db.r6gd.large')).toBeUndefined();
    expect(findInstanceClass('db.r6gd.32xlarge')).toBeUndefined();
    expect(parseInstanceClass('r6gd.xlarge')).toBeUndefined();
    expect(parseInstanceClass('db.r6gd')).toBeUndefined();
    expect(parseInstanceClass('db.r6gd.xlarge.extra')).toBeUndefined();
    expect(isOptimizedReadsFamily('r6g')).toBe(false);
    // Inherited object keys are not families.
    expect(isOptimizedReadsFamily('constructor')).toBe(false);
    expect(isOptimizedReadsFamily('toString')).toBe(false);
  });
});
