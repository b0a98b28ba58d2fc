/* eslint-disable @typescript-eslint/no-empty-object-type -- jsii exports no type aliases: an interface extending the new one is the old name */
import type { Construct } from 'constructs';
import { AuroraOptimizedReads, type AuroraOptimizedReadsProps } from './aurora-optimized-reads';
import type { AuroraOptimizedReadsAttributes, IAuroraOptimizedReads } from './aurora-optimized-reads-attributes';
import { Dashboard, type DashboardProps } from './dashboard';
import { LambdaConsumer, type LambdaConsumerProps } from './lambda-consumer';
import type { IPoolingTier, IProxyEndpoint } from './pooling-tier';
import { RdsProxy, type RdsProxyProps } from './rds-proxy';
import type { RdsProxyAttributes } from './rds-proxy-attributes';
import { RdsProxyEndpoint, type IRdsProxy, type RdsProxyEndpointAttributes, type RdsProxyEndpointOptions, type RdsProxyEndpointProps } from './rds-proxy-endpoint';

/**
 * The names the constructs had before each took its Terraform module's name (docs/DECISIONS.md, "One name per
 * thing"). Kept so that code written against them still compiles and synthesizes the same template: each is
 * the new one under its old name, construct ids being the user's. Removed in the next major version.
 */

/** @deprecated use AuroraOptimizedReadsProps */
export interface OptimizedReadsClusterProps extends AuroraOptimizedReadsProps {}

/** @deprecated use AuroraOptimizedReadsAttributes */
export interface OptimizedReadsClusterAttributes extends AuroraOptimizedReadsAttributes {}

/** @deprecated use IAuroraOptimizedReads */
export interface IOptimizedReadsCluster extends IAuroraOptimizedReads {}

/** @deprecated use AuroraOptimizedReads, the name of the Terraform module (aurora-optimized-reads) and the cdktn class */
export class OptimizedReadsCluster extends AuroraOptimizedReads {
  /** @deprecated use AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes */
  public static fromOptimizedReadsClusterAttributes(scope: Construct, id: string, attrs: AuroraOptimizedReadsAttributes): IAuroraOptimizedReads {
    return AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes(scope, id, attrs);
  }
}

/** @deprecated use RdsProxyProps */
export interface PoolingProxyProps extends RdsProxyProps {}

/** @deprecated use RdsProxyAttributes */
export interface PoolingProxyAttributes extends RdsProxyAttributes {}

/** @deprecated use RdsProxy: both engines pool, and RdsProxy names the one this is (Terraform: modules/rds-proxy) */
export class PoolingProxy extends RdsProxy {
  /** @deprecated use RdsProxy.fromRdsProxyAttributes */
  public static fromPoolingProxyAttributes(scope: Construct, id: string, attrs: RdsProxyAttributes): IPoolingTier {
    return RdsProxy.fromRdsProxyAttributes(scope, id, attrs);
  }
}

/** @deprecated use IRdsProxy */
export interface IPoolingProxy extends IRdsProxy {}

/** @deprecated use RdsProxyEndpointOptions */
export interface PoolingProxyEndpointOptions extends RdsProxyEndpointOptions {}

/** @deprecated use RdsProxyEndpointAttributes */
export interface PoolingProxyEndpointAttributes extends RdsProxyEndpointAttributes {}

/** @deprecated use RdsProxyEndpointProps */
export interface PoolingProxyEndpointProps extends RdsProxyEndpointProps {}

/** @deprecated use RdsProxyEndpoint */
export class PoolingProxyEndpoint extends RdsProxyEndpoint {
  /** @deprecated use RdsProxyEndpoint.fromRdsProxyEndpointAttributes */
  public static fromPoolingProxyEndpointAttributes(scope: Construct, id: string, attrs: RdsProxyEndpointAttributes): IProxyEndpoint {
    return RdsProxyEndpoint.fromRdsProxyEndpointAttributes(scope, id, attrs);
  }
}

/** @deprecated use LambdaConsumerProps */
export interface DatabaseConsumerFunctionProps extends LambdaConsumerProps {}

/** @deprecated use LambdaConsumer, the name of the Terraform module (lambda-consumer) and the cdktn class */
export class DatabaseConsumerFunction extends LambdaConsumer {}

/** @deprecated use DashboardProps */
export interface DatabaseDashboardProps extends DashboardProps {}

/** @deprecated use Dashboard, the name of the Terraform module (dashboard) and the cdktn class */
export class DatabaseDashboard extends Dashboard {}
