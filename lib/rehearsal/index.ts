/** Public surface of the local rehearsal: the CLIs, the bench and the tests import from here only. */
export * from './errors';
export * from './settings';
export * from './rules';
export * from './types';
export { Rehearsal } from './rehearsal';
export * from './status-format';
export * from './drill';
export * from './lambda-harness';
export * from './loopback-blocks';
export { WorkDirLayout, tlsPaths, type NodePaths, type PgBouncerPaths, type HaproxyPaths, type PgpoolPaths, type TlsPaths } from './layout';
export { HealthChecker } from './health-checker';
export { renderHaproxyConfig, renderPgpoolConfig } from './peers';
export * from './pgbouncer-config';
export * from './scram';
export type { HealthReport, NodeState, RehearsalState } from './state';
export type { Secrets } from './secrets';
export { clientConfig, query, sleep, waitFor, type Target } from './sql';
export { groupMembers, isAlive, stopProcess, type TrackedProcess } from './processes';

// Building blocks for a bare PostgreSQL outside a rehearsal (the Lambda suites' primary and standby).
export { findPgBouncer, findPostgres15BinDir } from './binaries';
export { serverOsUser, type OsUser } from './os-user';
export { generateTls, type TlsFiles } from './tls';
export { cloneReplica, initWriter, launchNode, nodeState, waitReady, type PostgresContext } from './postgres';

// The rehearse CLI's commands (bin/rehearse.ts).
export { isUsageProblem, parseArgs, runRehearseCommand, settingsFrom, type ParsedArgs } from './cli';
