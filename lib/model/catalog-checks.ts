import {
  DEPRECATED_ENGINE_VERSIONS,
  OPTIMIZED_READS_MIN_MAJOR,
  compareEngineVersions,
  newestOfferedVersion,
  parseEngineVersion,
  versionFloor,
} from './engine-versions';
import { OPTIMIZED_READS_FAMILIES, findInstanceClass, isOptimizedReadsFamily, parseInstanceClass, sizesOf } from './instance-classes';

/**
 * The checks of the instance class and the engine version against the catalogs: the logic of the
 * `instance-class` and `engine-version` rows of rules.ts. `name` is how the message names the property.
 */

const FAMILY_LIST = Object.keys(OPTIMIZED_READS_FAMILIES).map((f) => `db.${f}`).join(', ');

export function checkInstanceClass(instanceClass: string, name = 'instanceClass'): string | undefined {
  const parsed = parseInstanceClass(instanceClass);
  if (!parsed) {
    return `${name} ${instanceClass} is not a DB instance class: use the form db.<family>.<size>, e.g. db.r6gd.xlarge`;
  }
  if (!isOptimizedReadsFamily(parsed.family)) {
    return `${name} ${instanceClass} has no local NVMe: Optimized Reads needs ${FAMILY_LIST} (e.g. db.r6gd.xlarge)`;
  }
  if (!findInstanceClass(instanceClass)) {
    return `${name} ${instanceClass} is not offered by Aurora PostgreSQL: choose a size of ${parsed.family} from ${sizesOf(parsed.family).join(', ')}`;
  }
  return undefined;
}

export function checkEngineVersion(engineVersion: string, instanceClass?: string, name = 'engineVersion'): string | undefined {
  const parsed = parseEngineVersion(engineVersion);
  if (!parsed) {
    return `${name} ${engineVersion} is not of the form MAJOR.MINOR: use e.g. ${newestOfferedVersion()}`;
  }
  if (parsed.major < OPTIMIZED_READS_MIN_MAJOR) {
    return `${name} ${engineVersion} predates Optimized Reads: use ${OPTIMIZED_READS_MIN_MAJOR}.x or later, e.g. ${newestOfferedVersion()}`;
  }
  const spec = instanceClass ? findInstanceClass(instanceClass) : undefined;
  if (spec) {
    const floor = versionFloor(spec.family, parsed.major);
    if (floor && compareEngineVersions(parsed, parseEngineVersion(floor)!) < 0) {
      return `${name} ${engineVersion} is below the Optimized Reads floor ${floor} for ${spec.family}: use ${newestOfferedVersion(parsed.major) ?? floor} or later`;
    }
  }
  if (DEPRECATED_ENGINE_VERSIONS.includes(engineVersion)) {
    return `${name} ${engineVersion} is deprecated and no longer offered by Amazon RDS: use ${newestOfferedVersion(parsed.major) ?? newestOfferedVersion()}`;
  }
  return undefined;
}

/** The warning (not a rule) for a well-formed version newer than the catalog. */
export function unknownEngineVersionWarning(engineVersion: string, name = 'engineVersion'): string {
  return `${name} ${engineVersion} is not in the kit's catalog of offered versions; check that RDS offers it in your region`;
}
