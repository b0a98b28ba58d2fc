import { type CostEstimate, estimateCost, formatCostEstimate } from './model/cost-estimate';
import type { DeploymentInventory } from './model/cost-inventory';
import type { CostEstimateOptions } from './model/cost-pricing';
import { PRICES_READ_ON } from './model/prices';

/**
 * The monthly cost estimate `synth summary` and `plan summary` print, for a user's own tooling: what a
 * deployment runs (its inventory) priced from the kit's price table, with RDS Proxy against the PgBouncer
 * fleet and Aurora Standard against I/O-Optimized. Static members, so that every jsii language has them.
 */
export class CostEstimator {
  /** The date the price table's figures were read (YYYY-MM-DD). */
  public static readonly PRICES_AS_OF: string = PRICES_READ_ON;

  /** The monthly cost of the inventory's hourly resources; lines the table has no price for have no figure and say so. */
  public static estimate(inventory: DeploymentInventory, options?: CostEstimateOptions): CostEstimate {
    return estimateCost(inventory, options ?? {});
  }

  /** The estimate as the summaries print it. */
  public static format(estimate: CostEstimate): string {
    return formatCostEstimate(estimate);
  }

  private constructor() {}
}
