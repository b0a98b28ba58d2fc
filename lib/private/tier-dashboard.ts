import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Duration } from 'aws-cdk-lib';
import { DEFAULT_PROXY_ENDPOINT_NAME, EndpointRole, POOLER_LISTENER_SERIES, TARGET_ROLE_SERIES, poolerTargetSeries, type MetricScope, type MetricSubject } from '../model';

/** One line of a scope: what it is labelled in graphs, how its alarms are named, and its dimensions' values. */
export interface Series {
  readonly label: string;
  /** The start of its alarms' names (WriterCpu); lines of a scope without alarms have none. */
  readonly alarmName?: string;
  /** Position among the cluster's instances, writer first (`instance` scope). */
  readonly instanceIndex?: number;
  readonly subject: MetricSubject;
}

/** What a Dashboard charts of a pooling tier, whichever its engine. */
export interface TierDashboard {
  /** The tier's sections, in order: a title and the catalog scope charted under it. */
  readonly sections: ReadonlyArray<{ readonly title: string; readonly scope: MetricScope }>;
  /** The lines of a scope: none for a scope of the other engine. */
  series(scope: MetricScope): Series[];
  /** The fleet's host count, for the alarms that compare the healthy hosts with it (PgBouncer engine). */
  readonly fleetHosts?: number;
}

/** How the lines of a named tier metric combine into one, and the factor to the unit the interface promises. */
export interface CombinedMetric {
  readonly lines: cloudwatch.Metric[];
  /** The metric math function over the lines (a single line without a factor is returned as is). */
  readonly combine: 'SUM' | 'MAX' | 'MIN';
  /** What the combined value is multiplied by, e.g. `0.001` for microseconds to milliseconds. */
  readonly factor?: number;
  readonly label: string;
  readonly options?: cloudwatch.MetricOptions;
}

/** One metric of a tier's named signal: the line itself, or metric math over the lines (and the unit's factor). */
export function combinedMetric(m: CombinedMetric): cloudwatch.IMetric {
  if (m.lines.length === 0) throw new Error(`${m.label}: no lines to combine`);
  if (m.lines.length === 1 && m.factor === undefined) return m.lines[0]!;
  const ids = m.lines.map((_, i) => `m${i}`);
  const combined = ids.length === 1 ? ids[0]! : `${m.combine}([${ids.join(', ')}])`;
  return new cloudwatch.MathExpression({
    expression: m.factor === undefined ? combined : `${combined} * ${m.factor}`,
    usingMetrics: Object.fromEntries(ids.map((id, i) => [id, m.lines[i]!])),
    label: m.options?.label ?? m.label,
    color: m.options?.color,
    period: m.options?.period ?? Duration.minutes(1),
  });
}

/**
 * The PgBouncer engine's pooled signals, the same for a fleet and for one imported: the role's pool lines
 * (the hosts' metric per listener and pool target) combined into the unit the interface promises.
 */
const FLEET_POOL_SIGNALS = {
  clientConnections: { metricName: 'ClientConnections', combine: 'SUM', label: 'client connections' },
  serverConnections: { metricName: 'ServerConnections', combine: 'SUM', label: 'server connections' },
  // MaxWait is published in seconds; the interface promises milliseconds.
  borrowLatency: { metricName: 'MaxWait', combine: 'MAX', factor: 1000, label: 'longest wait (ms)' },
} as const satisfies Record<string, { metricName: string; combine: CombinedMetric['combine']; factor?: number; label: string }>;

/** One of FLEET_POOL_SIGNALS for `options.role` (default READ_WRITE), from the tier's own pool lines. */
export function fleetPoolSignal(
  signal: keyof typeof FLEET_POOL_SIGNALS,
  // PoolingMetricOptions's shape (pooling-tier.ts imports this file).
  options: cloudwatch.MetricOptions & { readonly role?: EndpointRole },
  poolLines: (role: EndpointRole, metricName: string, props: cloudwatch.MetricOptions) => cloudwatch.Metric[],
): cloudwatch.IMetric {
  const { role = EndpointRole.READ_WRITE, ...props } = options;
  const s: { metricName: string; combine: CombinedMetric['combine']; factor?: number; label: string } = FLEET_POOL_SIGNALS[signal];
  return combinedMetric({ lines: poolLines(role, s.metricName, props), combine: s.combine, ...(s.factor !== undefined ? { factor: s.factor } : {}), label: `${role} ${s.label}`, options: props });
}

/** What a fleet's dashboard needs of the PgBouncer engine, built or imported. */
export interface ChartedFleetSource {
  /** The Fleet dimension of the hosts' metrics. */
  readonly fleetName: string;
  readonly hosts: number;
  /** The roles with a session-pooling listener charted too. */
  readonly sessionRoles: ReadonlyArray<EndpointRole>;
  poolTargets(role: EndpointRole): string[];
  /** The load balancer's and the listener's target group's full names. */
  targetGroupSubject(role: EndpointRole, session: boolean): { readonly loadBalancer: string; readonly targetGroup: string };
}

/** What a Dashboard charts of a fleet: its listeners' pool targets and the load balancer's target groups. */
export function fleetDashboardOf(fleet: ChartedFleetSource): TierDashboard {
  // Both transaction listeners, and the session ones charted too (their pools are a share of the same targets'
  // budgets, charted and alarmed on their own).
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
          return listeners.map(({ role, session, listener, targetGroupAlarmName }) => ({ label: listener, alarmName: targetGroupAlarmName, subject: fleet.targetGroupSubject(role, session) }));
        default:
          return [];
      }
    },
  };
}

/**
 * What a Dashboard charts of RDS Proxy, built or imported: its default endpoint and `endpoints()` (read
 * when the dashboard is drawn, so endpoints added after it count), and its target roles.
 */
export function proxyDashboardOf(proxyName: string, endpoints: () => ReadonlyArray<{ readonly label: string; readonly endpointName: string }>): TierDashboard {
  return {
    sections: [
      { title: 'RDS Proxy endpoints (client side)', scope: 'proxy-endpoint' },
      { title: 'RDS Proxy target roles (database side)', scope: 'proxy-target-role' },
    ],
    series: (scope) => {
      switch (scope) {
        case 'proxy-endpoint':
          return [
            { label: DEFAULT_PROXY_ENDPOINT_NAME, subject: { proxyName, endpointName: DEFAULT_PROXY_ENDPOINT_NAME } },
            ...endpoints().map(({ label, endpointName }) => ({ label, subject: { proxyName, endpointName } })),
          ];
        case 'proxy-target-role':
          return TARGET_ROLE_SERIES.map(({ role, alarmName }) => ({ label: role, alarmName, subject: { proxyName, targetRole: role } }));
        default:
          return [];
      }
    },
  };
}
