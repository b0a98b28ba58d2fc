/** What a PgBouncerProxy of another stack or app is imported by (its own file, so the import's implementation needs nothing of the construct's). */
import type { PoolSizing } from './model';
import type { IAuroraOptimizedReads } from './aurora-optimized-reads-attributes';

/**
 * A PgBouncerProxy of another stack or app (PgBouncerProxy.fromPgBouncerProxyAttributes): the values its app
 * exports, e.g. as stack outputs.
 */
export interface PgBouncerProxyAttributes {
  /** The fleet's name (the FleetName dimension of its hosts' metrics). */
  readonly fleetName: string;
  /** The fleet's host count. */
  readonly hosts: number;
  /** The cluster the fleet pools for: its identifiers are the pools' Target dimension. */
  readonly cluster: IAuroraOptimizedReads;
  /** The Network Load Balancer's full name (its metrics' LoadBalancer dimension). */
  readonly loadBalancerFullName: string;
  /** The full name of the read/write transaction listener's target group. */
  readonly readWriteTargetGroupFullName: string;
  /** The full name of the read-only transaction listener's target group. */
  readonly readOnlyTargetGroupFullName: string;
  /**
   * The complete ARN of the password secret of each user granted through this import, by user name: the
   * secrets the fleet's app made (PgBouncerProxy.consumerPasswordSecret), which its hosts know.
   * @default - none: every grant is refused with the fix
   */
  readonly consumerPasswordSecretArns?: Record<string, string>;
  /**
   * The fleet's pool sizing (PgBouncerProxy.poolSizing in its app).
   * @default - unknown: reading poolSizing fails with the fix
   */
  readonly poolSizing?: PoolSizing;
}
