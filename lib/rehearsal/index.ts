/** Public surface of the local rehearsal. */
export * from './errors';
export * from './settings';
export * from './rehearsal';
export * from './status-format';
export * from './drill';
export { HealthChecker } from './health-checker';
export { renderHaproxyConfig, renderPgpoolConfig } from './peers';
export type { HealthReport, RehearsalState } from './state';
export * from './lambda-harness';
