import type { IConstruct } from 'constructs';

/**
 * A synth-time validation failure, as the kit's CDK constructs throw it: each line names the construct
 * path, the prop, the bad value and the fix, e.g.
 * `Reporting/Proxy: maxConnectionsPercent 150 is out of range: ... (an integer from 1 to 100)`.
 */
export class KitValidationError extends Error {
  public readonly constructPath: string;
  public readonly violations: ReadonlyArray<string>;

  constructor(scope: IConstruct, violations: ReadonlyArray<string>) {
    const path = scope.node.path || '<root>';
    super(violations.map((v) => `${path}: ${v}`).join('\n'));
    this.name = 'KitValidationError';
    this.constructPath = path;
    this.violations = violations;
  }
}
