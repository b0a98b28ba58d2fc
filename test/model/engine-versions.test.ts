import * as fs from 'fs';
import * as path from 'path';
import {
  DEFAULT_ENGINE_VERSION,
  DEPRECATED_ENGINE_VERSIONS,
  INSTANCE_CLASS_CATALOG,
  OFFERED_ENGINE_VERSIONS,
  OPTIMIZED_READS_FAMILIES,
  OPTIMIZED_READS_MIN_MAJOR,
  OPTIMIZED_READS_VERSION_FLOORS,
  OptimizedReadsFamily,
  checkEngineVersion,
  compareEngineVersions,
  newestOfferedVersion,
  parameterGroupFamily,
  parseEngineVersion,
  versionFloor,
} from '../../lib/model';

const CLUSTER_ENGINE_TYPINGS = path.join(
  path.dirname(require.resolve('aws-cdk-lib/package.json')),
  'aws-rds',
  'lib',
  'cluster-engine.d.ts',
);

/**
 * Every `AuroraPostgresEngineVersion.VER_<major>_<minor>` constant of the installed aws-cdk-lib with
 * major >= 14 (the `_LIMITLESS` variants are a different engine flavour and are skipped), and whether
 * its JSDoc carries `@deprecated`.
 */
function awsCdkLibVersions(): Map<string, boolean> {
  const source = fs.readFileSync(CLUSTER_ENGINE_TYPINGS, 'utf8');
  const start = source.indexOf('export declare class AuroraPostgresEngineVersion ');
  if (start < 0) throw new Error(`no AuroraPostgresEngineVersion class in ${CLUSTER_ENGINE_TYPINGS}`);
  const end = source.indexOf('\n}', start);
  const body = source.slice(start, end);
  const versions = new Map<string, boolean>();
  // Each member ends with `;`; the text since the previous member holds this member's JSDoc.
  const member = /static readonly VER_(\d+)_(\d+)(_[A-Z0-9_]+)?\s*:/g;
  let previousEnd = 0;
  for (let m = member.exec(body); m !== null; m = member.exec(body)) {
    const doc = body.slice(previousEnd, m.index);
    previousEnd = body.indexOf(';', m.index) + 1;
    const major = Number(m[1]);
    if (m[3] !== undefined || major < OPTIMIZED_READS_MIN_MAJOR) continue;
    versions.set(`${major}.${Number(m[2])}`, /@deprecated/.test(doc));
  }
  return versions;
}

/**
 * Versions the model lists as deprecated although aws-cdk-lib does not mark them so. Each needs a
 * reason; the test below fails once aws-cdk-lib catches up, so the entry can be removed.
 */
const DEPRECATED_AHEAD_OF_AWS_CDK_LIB: Readonly<Record<string, string>> = {
  // Amazon RDS ended standard support for 14.6, but aws-cdk-lib's VER_14_6 carries no @deprecated tag.
  // It is below every family's Optimized Reads floor (14.9 / 14.12) anyway, so nothing offers it.
  '14.6': 'RDS ended 14.6; below every Optimized Reads floor',
};

const byVersion = (a: string, b: string) => compareEngineVersions(parseEngineVersion(a)!, parseEngineVersion(b)!);

describe('engine versions agree with aws-cdk-lib', () => {
  const cdk = awsCdkLibVersions();

  test('the typings were read (sanity: a known version of each major is there)', () => {
    for (const v of ['14.13', '15.8', '16.4', '17.9']) expect(cdk.has(v)).toBe(true);
    expect(cdk.size).toBeGreaterThan(40);
  });

  test('OFFERED + DEPRECATED cover exactly the aws-cdk-lib constants of majors 14 and up', () => {
    // GIVEN
    const model = [...OFFERED_ENGINE_VERSIONS, ...DEPRECATED_ENGINE_VERSIONS].sort(byVersion);
    // THEN
    expect(model).toEqual([...cdk.keys()].sort(byVersion));
  });

  test('offered versions are the ones aws-cdk-lib does not deprecate', () => {
    const expectedOffered = [...cdk.entries()]
      .filter(([v, deprecated]) => !deprecated && !(v in DEPRECATED_AHEAD_OF_AWS_CDK_LIB))
      .map(([v]) => v)
      .sort(byVersion);
    expect([...OFFERED_ENGINE_VERSIONS].sort(byVersion)).toEqual(expectedOffered);
  });

  test('deprecated versions are the ones aws-cdk-lib deprecates, plus the documented exceptions', () => {
    const expectedDeprecated = [...cdk.entries()]
      .filter(([v, deprecated]) => deprecated || v in DEPRECATED_AHEAD_OF_AWS_CDK_LIB)
      .map(([v]) => v)
      .sort(byVersion);
    expect([...DEPRECATED_ENGINE_VERSIONS].sort(byVersion)).toEqual(expectedDeprecated);
  });

  test.each(Object.entries(DEPRECATED_AHEAD_OF_AWS_CDK_LIB))(
    'exception %s is still needed (aws-cdk-lib lists it without @deprecated) and is below every floor',
    (version, reason) => {
      expect(reason.trim()).not.toBe('');
      expect(cdk.get(version)).toBe(false);
      const parsed = parseEngineVersion(version)!;
      for (const family of Object.keys(OPTIMIZED_READS_FAMILIES) as OptimizedReadsFamily[]) {
        const floor = versionFloor(family, parsed.major);
        expect(floor).toBeDefined();
        expect(compareEngineVersions(parsed, parseEngineVersion(floor!)!)).toBeLessThan(0);
      }
    },
  );
});

describe('engine-version tables', () => {
  test('every listed version parses, is listed once, and is not both offered and deprecated', () => {
    const all = [...OFFERED_ENGINE_VERSIONS, ...DEPRECATED_ENGINE_VERSIONS];
    expect(new Set(all).size).toBe(all.length);
    for (const v of all) {
      const parsed = parseEngineVersion(v);
      expect(parsed).toBeDefined();
      expect(parsed!.major).toBeGreaterThanOrEqual(OPTIMIZED_READS_MIN_MAJOR);
    }
  });

  test('Optimized Reads floors are the documented ones', () => {
    // "Aurora Optimized Reads" in the Aurora User Guide.
    expect(OPTIMIZED_READS_VERSION_FLOORS).toEqual({
      r6gd: { 14: '14.9', 15: '15.4', 16: '16.1' },
      r6id: { 14: '14.9', 15: '15.4', 16: '16.1' },
      r8gd: { 14: '14.12', 15: '15.7', 16: '16.3', 17: '17.4' },
    });
    expect(versionFloor('r6gd', 17)).toBeUndefined();
    expect(versionFloor('r8gd', 18)).toBeUndefined();
  });

  test('DEFAULT_ENGINE_VERSION is offered and at or above every family floor of its major', () => {
    // GIVEN
    const parsed = parseEngineVersion(DEFAULT_ENGINE_VERSION)!;
    // THEN
    expect(OFFERED_ENGINE_VERSIONS).toContain(DEFAULT_ENGINE_VERSION);
    expect(DEPRECATED_ENGINE_VERSIONS).not.toContain(DEFAULT_ENGINE_VERSION);
    for (const family of Object.keys(OPTIMIZED_READS_FAMILIES) as OptimizedReadsFamily[]) {
      const floor = versionFloor(family, parsed.major);
      if (floor) expect(compareEngineVersions(parsed, parseEngineVersion(floor)!)).toBeGreaterThanOrEqual(0);
    }
    // And every catalog class accepts it.
    for (const spec of INSTANCE_CLASS_CATALOG) expect(checkEngineVersion(DEFAULT_ENGINE_VERSION, spec.instanceClass)).toBeUndefined();
  });

  test('DEFAULT_ENGINE_VERSION is the newest minor of its major', () => {
    expect(newestOfferedVersion(parseEngineVersion(DEFAULT_ENGINE_VERSION)!.major)).toBe(DEFAULT_ENGINE_VERSION);
  });

  test.each(Object.keys(OPTIMIZED_READS_FAMILIES) as OptimizedReadsFamily[])(
    '%s: an offered version is accepted exactly when it is at or above the family floor',
    (family) => {
      const instanceClass = `db.${family}.xlarge`;
      for (const v of OFFERED_ENGINE_VERSIONS) {
        const parsed = parseEngineVersion(v)!;
        const floor = versionFloor(family, parsed.major);
        const atOrAboveFloor = floor === undefined || compareEngineVersions(parsed, parseEngineVersion(floor)!) >= 0;
        expect([v, checkEngineVersion(v, instanceClass) === undefined]).toEqual([v, atOrAboveFloor]);
      }
    },
  );

  test('every deprecated version is rejected, with or without an instance class', () => {
    for (const v of DEPRECATED_ENGINE_VERSIONS) {
      expect(checkEngineVersion(v)).toMatch(new RegExp(`^engineVersion ${v.replace('.', '\\.')} is deprecated`));
      for (const spec of INSTANCE_CLASS_CATALOG) expect(checkEngineVersion(v, spec.instanceClass)).toBeDefined();
    }
  });

  test('versions compare numerically, not as text', () => {
    expect(compareEngineVersions(parseEngineVersion('14.10')!, parseEngineVersion('14.9')!)).toBeGreaterThan(0);
    expect(compareEngineVersions(parseEngineVersion('16.13')!, parseEngineVersion('17.1')!)).toBeLessThan(0);
    expect(compareEngineVersions(parseEngineVersion('15.4')!, parseEngineVersion('15.4')!)).toBe(0);
  });

  test('parseEngineVersion accepts MAJOR.MINOR only', () => {
    expect(parseEngineVersion('17.9')).toEqual({ major: 17, minor: 9 });
    expect(parseEngineVersion('17')).toBeUndefined();
    expect(parseEngineVersion('17.9.1')).toBeUndefined();
    expect(parseEngineVersion('v17.9')).toBeUndefined();
    expect(parseEngineVersion('')).toBeUndefined();
  });

  test('newestOfferedVersion picks numerically, per major and overall, and leaves the table alone', () => {
    // GIVEN
    const before = [...OFFERED_ENGINE_VERSIONS];
    // THEN (14.22 > 14.9 numerically; text order would pick 14.9)
    expect(newestOfferedVersion(14)).toBe('14.22');
    expect(newestOfferedVersion(16)).toBe('16.13');
    expect(newestOfferedVersion(13)).toBeUndefined();
    const overall = newestOfferedVersion()!;
    for (const v of OFFERED_ENGINE_VERSIONS) expect(byVersion(v, overall)).toBeLessThanOrEqual(0);
    expect(OFFERED_ENGINE_VERSIONS).toEqual(before);
  });

  test('parameterGroupFamily follows the major version', () => {
    expect(parameterGroupFamily('17.9')).toBe('aurora-postgresql17');
    expect(parameterGroupFamily('14.13')).toBe('aurora-postgresql14');
    expect(() => parameterGroupFamily('17')).toThrow('engineVersion 17 is not of the form MAJOR.MINOR');
  });
});
