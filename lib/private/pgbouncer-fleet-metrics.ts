import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { IConstruct } from 'constructs';
import { EndpointRole } from '../model';
import { PoolMode } from '../model/pgbouncer-ini';
import { fleetMetric } from '../pgbouncer-metric-options';
import { fleetDashboardOf, type TierDashboard } from './tier-dashboard';

/** What the fleet's pool lines and dashboard need of its PgBouncerProxy. */
export interface ChartedFleet extends IConstruct {
  /** The Fleet dimension of the hosts' metrics. */
  readonly fleetName: string;
  readonly hosts: number;
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  /** The roles with a session-pooling listener. */
  readonly sessionRoles: EndpointRole[];
  poolTargets(listener: EndpointRole): string[];
  targetGroup(listener: EndpointRole, poolMode?: PoolMode): elbv2.NetworkTargetGroup;
}

/** The pool modes of the role's listeners: transaction, and session once an endpoint of the role uses it. */
export function listenerModes(fleet: ChartedFleet, role: EndpointRole): PoolMode[] {
  return [PoolMode.TRANSACTION, ...(fleet.sessionRoles.includes(role) ? [PoolMode.SESSION] : [])];
}

/** A fleet metric of each of the role's listeners and pool targets, at the catalog's statistic. */
export function fleetPoolLines(fleet: ChartedFleet, role: EndpointRole, metricName: string, props: cloudwatch.MetricOptions): cloudwatch.Metric[] {
  return listenerModes(fleet, role).flatMap((poolMode) => fleet.poolTargets(role).map((target) => fleetMetric(fleet, metricName, { ...props, listener: role, poolMode, target }, true)));
}

/** What a Dashboard charts of the fleet, with the session listeners its endpoints added before the dashboard. */
export function fleetDashboard(fleet: ChartedFleet): TierDashboard {
  return fleetDashboardOf({
    fleetName: fleet.fleetName,
    hosts: fleet.hosts,
    sessionRoles: fleet.sessionRoles,
    poolTargets: (role) => fleet.poolTargets(role),
    targetGroupSubject: (role, session) => ({
      loadBalancer: fleet.loadBalancer.loadBalancerFullName,
      targetGroup: fleet.targetGroup(role, session ? PoolMode.SESSION : PoolMode.TRANSACTION).targetGroupFullName,
    }),
  });
}
