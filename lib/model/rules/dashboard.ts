/** Rules of the dashboard and its alarms (Dashboard; modules/dashboard). */
import { ALARM_THRESHOLD_UNITS, type AlarmThresholds } from '../metrics';
import { type Rule, custom, nonNegative, percentage } from '../rule-table';

export type DashboardRuleInput = Partial<AlarmThresholds> & { readonly instanceIdentifiers?: ReadonlyArray<string> };

const THRESHOLD_NAMES = Object.keys(ALARM_THRESHOLD_UNITS) as Array<keyof AlarmThresholds>;
const PERCENT_THRESHOLD_NAMES = THRESHOLD_NAMES.filter((n) => ALARM_THRESHOLD_UNITS[n] === 'percent');
const OTHER_THRESHOLD_NAMES = THRESHOLD_NAMES.filter((n) => ALARM_THRESHOLD_UNITS[n] !== 'percent');
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const thresholdNames = (names: ReadonlyArray<string>) => Object.fromEntries(names.map((n) => [n, `thresholds.${snake(n)}`]));

const DASHBOARD_MODULE = 'dashboard';

export const DASHBOARD_RULES: ReadonlyArray<Rule<DashboardRuleInput>> = [
  percentage({
    id: 'alarm-threshold-percent',
    properties: PERCENT_THRESHOLD_NAMES,
    terraform: { module: DASHBOARD_MODULE, names: thresholdNames(PERCENT_THRESHOLD_NAMES) },
  }),
  nonNegative({
    id: 'alarm-threshold-non-negative',
    properties: OTHER_THRESHOLD_NAMES,
    terraform: { module: DASHBOARD_MODULE, names: thresholdNames(OTHER_THRESHOLD_NAMES) },
  }),
  custom({
    id: 'instance-identifiers',
    properties: ['instanceIdentifiers'],
    terraform: { module: DASHBOARD_MODULE, names: { instanceIdentifiers: 'instance_identifiers' } },
    terraformOnly: 'CDK reads the instances from the AuroraOptimizedReads construct',
    summary: 'at least one (the writer first)',
    check: (i, n) => (i.instanceIdentifiers!.length === 0 ? `${n('instanceIdentifiers')} is empty: pass the writer first, then the readers` : undefined),
  }),
];
