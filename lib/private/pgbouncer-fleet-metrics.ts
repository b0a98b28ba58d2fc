import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { IConstruct } from 'constructs';
import { EndpointRole, POOLER_LISTENER_SERIES, poolerTargetSeries } from '../model';
import { PoolMode } from '../model/pgbouncer-ini';
import { fleetMetric } from '../pgbouncer-metric-options';
import type { TierDashboard } from './tier-dashboard';

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

/** What a DatabaseDashboard charts of a fleet: its listeners' pool targets and the load balancer's target groups. */
export function fleetDashboard(fleet: ChartedFleet): TierDashboard {
  // Both transaction listeners, and the session ones its endpoints added before the dashboard (their pools
  // are a share of the same targets' budgets, charted and alarmed on their own).
  const listeners = POOLER_LISTENER_SERIES.filter((l) => !l.session || fleet.sessionRoles.includes(l.role));
  return {
    sections: [
      { title: 'PgBouncer listeners per pool target', scope: 'pooler-target' },
      { title: 'PgBouncer load balancer target groups', scope: 'pooler-target-group' },
    ],
    fleetHosts: fleet.hosts,
    series: (scope) => {
      switch (scope) {
        case 'pooler-target':
          return listeners.flatMap(({ role, session, listener }) =>
            poolerTargetSeries(role, fleet.poolTargets(role), session).map(({ label, alarmName, target }) => ({ label, alarmName, subject: { fleetName: fleet.fleetName, listener, target } })),
          );
        case 'pooler-target-group':
          return listeners.map(({ role, session, listener, targetGroupAlarmName }) => ({
            label: listener,
            alarmName: targetGroupAlarmName,
            subject: { loadBalancer: fleet.loadBalancer.loadBalancerFullName, targetGroup: fleet.targetGroup(role, session ? PoolMode.SESSION : PoolMode.TRANSACTION).targetGroupFullName },
          }));
        default:
          return [];
      }
    },
  };
}
