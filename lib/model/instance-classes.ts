/**
 * The Optimized Reads instance-class catalog: the Aurora PostgreSQL DB instance classes that carry
 * local NVMe storage, and so support Optimized Reads (tiered cache + temporary objects).
 *
 * Sources:
 * - vCPU, memory and NVMe capacity: the EC2 instance-type specifications for the r6gd, r6id and r8gd
 *   families (docs.aws.amazon.com/ec2/latest/instancetypes/mo.html, "Instance store specifications").
 *   NVMe capacity is given in decimal GB, as EC2 lists it; memory in GiB.
 * - Which sizes Aurora PostgreSQL offers: "Supported DB engines for DB instance classes" in the Aurora
 *   User Guide (Concepts.DBInstanceClass.SupportAurora). Aurora does not offer `large` on these families.
 *
 * This table is data on purpose: the CDK constructs, the Terraform modules' validation and the local
 * rehearsal all read it (or a vector generated from it), so a new size is added here once.
 */

/** An instance family that supports Aurora Optimized Reads. */
export type OptimizedReadsFamily = 'r6gd' | 'r6id' | 'r8gd';

/** CPU architecture of a family; it decides nothing in the kit but is shown in summaries. */
export type Architecture = 'arm64' | 'x86_64';

export interface InstanceClassSpec {
  /** Full DB instance class, e.g. `db.r6gd.xlarge`. */
  readonly instanceClass: string;
  readonly family: OptimizedReadsFamily;
  /** Size suffix, e.g. `xlarge`. */
  readonly size: string;
  readonly vcpu: number;
  /** Instance memory in GiB. */
  readonly memoryGiB: number;
  /** Local NVMe instance storage in decimal GB (as EC2 specifies it). */
  readonly nvmeGB: number;
}

export interface FamilySpec {
  readonly family: OptimizedReadsFamily;
  readonly processor: string;
  readonly architecture: Architecture;
}

export const OPTIMIZED_READS_FAMILIES: Readonly<Record<OptimizedReadsFamily, FamilySpec>> = {
  r6gd: { family: 'r6gd', processor: 'AWS Graviton2', architecture: 'arm64' },
  r6id: { family: 'r6id', processor: 'Intel Xeon (Ice Lake)', architecture: 'x86_64' },
  r8gd: { family: 'r8gd', processor: 'AWS Graviton4', architecture: 'arm64' },
};

/** [size, vCPU, memory GiB, NVMe GB] rows per family. */
const SIZE_ROWS: Readonly<Record<OptimizedReadsFamily, ReadonlyArray<readonly [string, number, number, number]>>> = {
  r6gd: [
    ['xlarge', 4, 32, 237],
    ['2xlarge', 8, 64, 474],
    ['4xlarge', 16, 128, 950],
    ['8xlarge', 32, 256, 1900],
    ['12xlarge', 48, 384, 2850],
    ['16xlarge', 64, 512, 3800],
  ],
  r6id: [
    ['xlarge', 4, 32, 237],
    ['2xlarge', 8, 64, 474],
    ['4xlarge', 16, 128, 950],
    ['8xlarge', 32, 256, 1900],
    ['12xlarge', 48, 384, 2850],
    ['16xlarge', 64, 512, 3800],
    ['24xlarge', 96, 768, 5700],
    ['32xlarge', 128, 1024, 7600],
  ],
  r8gd: [
    ['xlarge', 4, 32, 237],
    ['2xlarge', 8, 64, 474],
    ['4xlarge', 16, 128, 950],
    ['8xlarge', 32, 256, 1900],
    ['12xlarge', 48, 384, 2850],
    ['16xlarge', 64, 512, 3800],
    ['24xlarge', 96, 768, 5700],
    ['48xlarge', 192, 1536, 11400],
  ],
};

/** Every Optimized Reads instance class the kit knows, in family then size order. */
export const INSTANCE_CLASS_CATALOG: ReadonlyArray<InstanceClassSpec> = (
  Object.keys(SIZE_ROWS) as OptimizedReadsFamily[]
).flatMap((family) =>
  SIZE_ROWS[family].map(([size, vcpu, memoryGiB, nvmeGB]) => ({
    instanceClass: `db.${family}.${size}`,
    family,
    size,
    vcpu,
    memoryGiB,
    nvmeGB,
  })),
);

const BY_CLASS = new Map(INSTANCE_CLASS_CATALOG.map((spec) => [spec.instanceClass, spec]));

/** The catalog entry for a DB instance class, or undefined when it is not an Optimized Reads class. */
export function findInstanceClass(instanceClass: string): InstanceClassSpec | undefined {
  return BY_CLASS.get(instanceClass);
}

/** Splits `db.<family>.<size>`; undefined when the string does not have that shape. */
export function parseInstanceClass(instanceClass: string): { family: string; size: string } | undefined {
  const match = /^db\.([a-z0-9-]+)\.([a-z0-9]+)$/.exec(instanceClass);
  return match ? { family: match[1], size: match[2] } : undefined;
}

export function isOptimizedReadsFamily(family: string): family is OptimizedReadsFamily {
  return Object.prototype.hasOwnProperty.call(OPTIMIZED_READS_FAMILIES, family);
}

/** Sizes offered for a family, smallest first. */
export function sizesOf(family: OptimizedReadsFamily): string[] {
  return SIZE_ROWS[family].map(([size]) => size);
}
