/** Public surface of the local rehearsal: the CLIs, the bench and the tests import from here only. */
export * from './errors';
export * from './settings';
export * from './rules';
export * from './types';
export { Rehearsal } from './rehearsal';
export { formatDownReport, type DownReport } from './down';
export * from './status-format';
export * from './drill';
export * from './lambda-harness';
export * from './lambda-runtime';
export * from './loopback-blocks';
export { WorkDirLayout, tlsPaths, type NodePaths, type PgBouncerPaths, type HaproxyPaths, type PgpoolPaths, type TlsPaths } from './layout';
export { HealthChecker } from './health-checker';
export { CHECKER_UNIT, launchHealthSupervisor, readSupervisorReport, StartLimit, UNIT_RESTART_POLICY, type RestartPolicy, type StartLimitOverride, type SupervisorReport } from './health-supervisor';
export { assessHealthChecker, healthStaleAfterMs, type HealthEvidence } from './health-status';
export { renderHaproxyConfig, renderPgpoolConfig, renderPgpoolHba } from './comparison-proxies';
export { endpointListener, pgBouncerPoolSizes, standInFiles, standInProcess, type PgBouncerPoolSizes, type StandInValues } from './pgbouncer';
export * from './scram';
export type { HealthReport, NodeState, PgBouncerEndpointSpec, RehearsalState } from './state';
export type { Secrets } from './secrets';
export { clientConfig, query, sleep, waitFor, type Target } from './sql';
export { groupMembers, isAlive, logTail, readProcesses, stopProcess, type TrackedProcess } from './processes';

// Building blocks for a bare PostgreSQL outside a rehearsal (the Lambda suites' primary and standby).
export { findPgBouncer, findPostgres15BinDir } from './binaries';
export { serverOsUser, type OsUser } from './os-user';
export { generateTls, type TlsFiles } from './tls';
export { cloneReplica, initWriter, launchNode, nodeState, primaryConninfo, waitReady, type PostgresContext } from './postgres';

// The deployed topology a rehearsal can be derived from (cdk.out or a Terraform plan).
export * from './topology';

// The rehearse CLI's commands (`aurora-proxy-kit rehearse`) and their progress.
export { formatOutputs, formatStatusJson, isUsageProblem, parseArgs, runRehearseCommand, specFrom, UsageError, type ParsedArgs } from './cli';
export { REHEARSE_COMMANDS, REHEARSE_OPTIONS, REHEARSE_SUMMARIES, rehearseCommand, type RehearseCommand } from './cli-spec';
export { UP_PHASES, type UpPhase, type UpProgress } from './start';

// AWS-shaped names and the certificates the rehearsal CA issues for them.
export * from './aws-names';
export { awsShapedCertificateRequests, issueCertificates, type AwsShapedCertificates, type CertificateRequest, type CertificateSet, type IssuedCertificate } from './tls';

// Hosts shaped like AWS's: a network namespace per VPC, processes started inside, CPU budgets per host.
export * from './network/plan';
export { networkLeftovers, networkNamespacesUnavailable, setUpNetwork, tearDownNetwork, unreachableRangeRouted, NETNS_ETC } from './network/setup';
export { hostCommand, type HostCommand, type HostCommandOptions } from './network/host-command';
export { listNamespaces, namespacePids } from './network/iproute';
export { consumerVpcEndpoints, rehearsalAwsNames, rehearsalNetwork, rehearsalNetworkPlan, rehearsalProxyEndpoints, type NetworkSettings, type RehearsalConnectionNames, type RehearsalNetworkMode, type RehearsalProxyEndpoint, CONSUMER_VPC, REHEARSAL_CLUSTER, REHEARSAL_PROXY, type ConsumerVpcEndpoints } from './network/rehearsal-network';
export * from './cgroups';

// A rehearsal of what CDK or Terraform would deploy (rehearse up --from).
export { deploymentFromTopology, formatNotReproduced, formatUpStandIns, rehearsalFromDeployment, rdsName, DATA_VPC, type RehearsedDeployment, type RehearsedEndpoint, type RehearsedConsumer } from './deployment';
export { deploymentConsumers, type RehearsedConsumerRun } from './deployment-consumers';
export { roleBootstrapRequest, type ConsumerLogin } from './consumer-roles';
export { instanceClassOf, nodeCores, poolerCores, rehearsalCgroupName, REHEARSAL_INSTANCE_CLASS, type PoolerBudgetHost } from './cpu-budgets';
export { readPoolers, type PooledProcess } from './poolers';
export { pgbouncerPid } from './pooler-host';
export { type BootingPoolerHost, type PoolerHost, type PoolerHostLogin, type PoolerHostOptions } from './pooler-host-types';
export { addPoolerLoadBalancerTarget, type PoolerLoadBalancer } from './pooler-load-balancer';
export { healthyTargets } from './hosts/load-balancer';
export { type DrillLogin } from './pooler-drills/clients';
export { poolerFailoverDrill, type FailoverDrillFigures } from './pooler-drills/failover';
export { loadBalancerDetectionWindowMs, poolerHostLostDrill, type HostLostDrillFigures } from './pooler-drills/host-lost';
export { poolerProcessKillDrill, PROCESS_RESTART_ALLOWANCE_SECONDS, processRestartBoundMs, type ProcessKillDrillFigures } from './pooler-drills/process-kill';
export { poolerReaderLostDrill, READER_LOST_GAP_BOUND_MS, readerBackBoundMs, type ReaderLostDrillFigures } from './pooler-drills/reader-lost';
export { BOOTSTRAP_FAILURE_BOUND_MS, poolerBootstrapFailureDrill, type BootstrapFailureDrillFigures } from './pooler-drills/bootstrap-failure';
export { execInHost, type BootedHost } from './hosts/booted-host';
export { COMPAT_TARGET_TITLES, COMPAT_TARGETS, startCompatStand, type CompatStand, type CompatTarget } from './compat-stand';
