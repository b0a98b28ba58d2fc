/** The rehearsal's vocabulary: what a client connects to, and what operations and `status` report. */
import type { PoolRow } from './pgbouncer';
import type { TrackedProcess } from './processes';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { ResolvedSettings } from './settings';
import type { HealthReport, RehearsalState } from './state';

/** What a client needs to connect somewhere in the rehearsal (always TLS, verify-full with caFile). */
export interface Endpoint {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  readonly caFile: string;
}

export interface Endpoints {
  /** PgBouncer read/write endpoint (RDS Proxy's default endpoint). */
  readonly readWrite: Endpoint;
  /** PgBouncer read-only endpoint over the live replicas (RDS Proxy READ_ONLY endpoint). */
  readonly readOnly: Endpoint;
  /** HAProxy TCP round-robin over the replicas (Aurora reader endpoint analog); absent without the comparison proxies. */
  readonly haproxy?: Endpoint;
  /** pgpool-II read/write split (ProxySQL analog); absent without the comparison proxies. */
  readonly pgpool?: Endpoint;
  /** The current writer, directly. */
  readonly writer: Endpoint;
  /** The current replicas, directly (including ones that were killed). */
  readonly replicas: ReadonlyArray<Endpoint>;
}

/**
 * Server connections each pool target may get: poolSizing() of the settings, split over the
 * target's PgBouncer processes. The read-only endpoint has this budget on every replica, so its
 * total is readOnly times the live replicas (as RDS Proxy's per-target pools).
 */
export interface PoolSizes {
  /** On the writer. */
  readonly readWrite: number;
  /** On each replica. */
  readonly readOnly: number;
}

export interface KillReport {
  readonly name: string;
  readonly address: string;
  /** Time from the kill until the health checker had removed the replica from the read-only pool. */
  readonly droppedAfterMs: number;
}

export interface FailoverReport {
  readonly oldWriter: string;
  readonly newWriter: string;
  readonly newWriterAddress: string;
  /** Replicas re-pointed at the new writer. */
  readonly followers: ReadonlyArray<string>;
  /** Kill -> promotion finished. */
  readonly promotedAfterMs: number;
  /** Kill -> the read/write endpoint points at the new writer. */
  readonly repointedAfterMs: number;
}

export interface AddReplicaReport {
  readonly name: string;
  readonly address: string;
  /** Start of addReplica -> the new replica streams from the writer. */
  readonly streamingAfterMs: number;
  /** Start -> the health checker has put it into the read-only endpoint's host list. */
  readonly inReadOnlyPoolAfterMs: number;
  /** Whether HAProxy (the reader-endpoint analog) now round-robins over it too. */
  readonly inHaproxy: boolean;
}

export interface ProcessStatus extends TrackedProcess {
  readonly alive: boolean;
}

export interface NodeStatus {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly role: 'writer' | 'replica' | 'down';
  readonly pid: number | undefined;
}

export interface ReplicationStatus {
  readonly application_name: string;
  readonly client_addr: string;
  readonly state: string;
  readonly sync_state: string;
  readonly replay_lag_bytes: number;
}

/** Whether the health checker is still watching (health-status.ts), beyond what its last report says. */
export interface HealthCheckerStatus {
  /** fresh: a recent report from a running checker; stale: the report is old or its checker is gone; missing: none yet. */
  readonly state: 'fresh' | 'stale' | 'missing';
  /** What is wrong, in words (absent when nothing is). */
  readonly problems?: ReadonlyArray<string>;
  readonly reportAgeMs?: number;
  /** Age beyond which a report is stale: a few check intervals. */
  readonly staleAfterMs: number;
  /** Pid that wrote the last report. */
  readonly checkerPid?: number;
  readonly supervisorPid?: number;
  readonly supervisorRunning: boolean;
  /** Times the supervisor restarted the checker. */
  readonly restarts: number;
  /** Times the supervisor restarted a PgBouncer process. */
  readonly poolerRestarts: number;
}

export interface RehearsalStatus {
  readonly workDir: string;
  readonly phase: RehearsalState['phase'];
  readonly settings: ResolvedSettings;
  /** The deployment rehearsed (`up --from`). */
  readonly deployment?: RehearsedDeployment;
  readonly endpoints: Endpoints;
  readonly poolSizes: PoolSizes;
  readonly processes: ReadonlyArray<ProcessStatus>;
  readonly nodes: ReadonlyArray<NodeStatus>;
  readonly replication: ReadonlyArray<ReplicationStatus>;
  /** SHOW POOLS of each PgBouncer endpoint, or why it could not be read. */
  readonly pools: Readonly<Record<'readWrite' | 'readOnly', ReadonlyArray<PoolRow> | string>>;
  readonly health: HealthReport | undefined;
  /** Whether that report is still current, and the supervisor's restarts. */
  readonly healthChecker: HealthCheckerStatus;
  /** A PgBouncer engine deployment's fleet (`up --from`): what its consumers reach. */
  readonly fleet?: FleetStatus;
}

/** The fleet of a rehearsed PgBouncer engine deployment: its hosts, load balancer and interface endpoints. */
export interface FleetStatus {
  readonly hosts: ReadonlyArray<{ readonly name: string; readonly address: string; readonly pid: number; readonly alive: boolean }>;
  readonly loadBalancer: { readonly address: string; readonly healthy: Readonly<Record<string, ReadonlyArray<string>>> | string };
  /** The interface endpoints by the names the consumers connect to, and the listener port of each one's role. */
  readonly endpoints: ReadonlyArray<{ readonly name: string; readonly role: string; readonly vpc: string; readonly host: string; readonly address: string; readonly port: number }>;
}
