import { IConstruct } from 'constructs';

/** Error itself, as a class declaration: jsii refuses `extends Error` even on an internal class. */
abstract class KitError extends Error {}

/**
 * A synth-time validation failure. The message names the construct path, the property, the bad
 * value and the fix, e.g.
 * `Data/Cluster: instanceClass db.r6g.xlarge has no local NVMe: Optimized Reads needs ...`.
 *
 * Internal to jsii, as aws-cdk-lib's own ValidationError is: jsii cannot carry a subclass of Error to
 * other languages. TypeScript users catch this class; in Python the same message arrives as the
 * RuntimeError the jsii runtime raises.
 *
 * @internal
 */
export class KitValidationError extends KitError {
  public readonly constructPath: string;
  public readonly violations: string[];

  constructor(scope: IConstruct, violations: ReadonlyArray<string>) {
    const path = scope.node.path || '<root>';
    super(violations.map((v) => `${path}: ${v}`).join('\n'));
    this.name = 'KitValidationError';
    this.constructPath = path;
    this.violations = [...violations];
  }
}

/** Throws one error listing every violation, so a user fixes all of them in one round. */
export function throwIfInvalid(scope: IConstruct, violations: ReadonlyArray<string | undefined>): void {
  const failed = violations.filter((v): v is string => v !== undefined);
  if (failed.length > 0) throw new KitValidationError(scope, failed);
}
