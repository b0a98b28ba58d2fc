import { Duration, Fn, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { IConstruct } from 'constructs';
import { EndpointRole, METRIC_PERIOD_SECONDS, type MetricScope, type MetricSubject, catalogMetric, metricDimensions } from './model';
import { fleetListenerOf } from './model/pgbouncer-fleet';
import { PoolMode } from './model/pgbouncer-ini';
import { POOLER_METRIC_LISTENERS, POOLER_METRICS_NAMESPACE, poolerMetricTarget } from './model/pgbouncer-metrics';
import { throwIfInvalid } from './private/validation';

/** Which listener and pool target a metric of a PgBouncerProxy's hosts is of. */
export interface PgBouncerMetricOptions extends cloudwatch.MetricOptions {
  /**
   * The listener whose processes reported the metric.
   * @default EndpointRole.READ_WRITE
   */
  readonly listener?: EndpointRole;
  /**
   * The listener's pool mode: its session-pooling listener's pools (a listener of their own, whose Listener
   * dimension is the role with `_SESSION`) or the transaction pools.
   * @default PoolMode.TRANSACTION
   */
  readonly poolMode?: PoolMode;
  /**
   * The pool target (the Target dimension): one of the proxy's `poolTargets(listener)`. Required for a
   * READ_ONLY listener that pools for more than one reader.
   * @default - the listener's only target
   */
  readonly target?: string;
}

/** The Target dimension of a pool's server host: its first DNS label, at synth or (for a token) at deploy. */
export function poolTargetOf(serverHost: string): string {
  return Token.isUnresolved(serverHost) ? Fn.select(0, Fn.split('.', serverHost)) : poolerMetricTarget(serverHost);
}

/** A metric of the kit's catalog scopes for the PgBouncer engine, at the dashboard's period unless `props` says otherwise. */
export function poolerMetric(scope: Extract<MetricScope, 'pooler-target' | 'pooler-target-group'>, metricName: string, subject: MetricSubject, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: scope === 'pooler-target' ? POOLER_METRICS_NAMESPACE : 'AWS/NetworkELB',
    metricName,
    dimensionsMap: metricDimensions(scope, subject),
    period: Duration.seconds(METRIC_PERIOD_SECONDS),
    ...props,
  });
}

/** What a fleet metric needs of its PgBouncerProxy. */
interface Fleet extends IConstruct {
  readonly fleetName: string;
  poolTargets(listener: EndpointRole): string[];
}

/**
 * A metric of a fleet's hosts of one listener and pool target; `atCatalogStatistic`: at the metric
 * catalog's statistic unless `props` gives one.
 */
export function fleetMetric(fleet: Fleet, metricName: string, props: PgBouncerMetricOptions = {}, atCatalogStatistic = false): cloudwatch.Metric {
  const { listener = EndpointRole.READ_WRITE, poolMode = PoolMode.TRANSACTION, target, ...options } = props;
  const targets = fleet.poolTargets(listener);
  throwIfInvalid(fleet, [
    target === undefined && targets.length !== 1 ? `target is missing for ${metricName} of the ${listener} listener, which pools for ${targets.length} instances: pass one of poolTargets(${listener})` : undefined,
  ]);
  const statistic = atCatalogStatistic ? { statistic: catalogMetric('pooler-target', metricName).statistics[0] } : {};
  return poolerMetric('pooler-target', metricName, { fleetName: fleet.fleetName, listener: POOLER_METRIC_LISTENERS[fleetListenerOf(listener, poolMode)], target: target ?? targets[0] }, { ...statistic, ...options });
}

/** A load balancer metric of a listener's target group, at the metric catalog's statistic unless `props` gives one. */
export function targetGroupMetric(loadBalancer: elbv2.NetworkLoadBalancer, targetGroup: elbv2.NetworkTargetGroup, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  const subject = { loadBalancer: loadBalancer.loadBalancerFullName, targetGroup: targetGroup.targetGroupFullName };
  return poolerMetric('pooler-target-group', metricName, subject, { statistic: catalogMetric('pooler-target-group', metricName).statistics[0], ...props });
}
