/**
 * What a rehearsal's settings are: the types the rules, the topology and the deployment read, below the
 * defaults and checks of settings.ts that use those modules. The settings are the rehearsal's own knobs;
 * the deployment rehearsed goes beside them (RehearsalSpec).
 */
import type { PoolSettings } from '../model/sizing';
import type { RehearsedDeployment } from './rehearsed-deployment';

/**
 * Where the servers listen: `loopback` (127.0.<b>.x, every process in the root namespace) or
 * `namespaces` (198.18.<b>.x in network namespaces shaped like the data and consumer VPCs, as root;
 * without root the rehearsal falls back to loopback and says so).
 */
export const REHEARSAL_NETWORKS = ['loopback', 'namespaces'] as const;
export type RehearsalNetwork = (typeof REHEARSAL_NETWORKS)[number];

export interface RehearsalSettings {
  /** Streaming replicas behind the read-only endpoint (default 2). */
  readonly replicas?: number;
  /** Synchronous (quorum of one replica) replication, as Aurora acknowledges after a quorum write (default true). */
  readonly synchronous?: boolean;
  /** Directory the rehearsal owns: data, configs, logs, state (default ./.rehearsal). */
  readonly workDir?: string;
  /** First three octets of the loopback block (default 127.0.10). */
  readonly addressBlock?: string;
  /** Port every server listens on, each on its own address (default 5432). */
  readonly port?: number;
  /** max_connections of every instance (default 100); as on Aurora, the pools leave RESERVED_CONNECTIONS of it to others. */
  readonly maxConnections?: number;
  /** max_connections the pools are sized against (default maxConnections). */
  readonly sizingMaxConnections?: number;
  /** RDS Proxy pool settings the PgBouncer pools are sized from (default DEFAULT_POOL_SETTINGS). */
  readonly pool?: PoolSettings;
  /** Client connections each PgBouncer process accepts (default 1000). */
  readonly maxClientConnections?: number;
  /**
   * PgBouncer processes per pool target (default 2): the read/write endpoint runs this many for the
   * writer, the read-only endpoint this many for each replica, all on the endpoint's one address:port
   * (so_reuseport), splitting each target's budget between them. Like RDS Proxy's several proxy hosts,
   * a crashed process leaves the endpoint up.
   */
  readonly poolerProcesses?: number;
  /** fsync on the instances (default false: throwaway data; replication still acknowledges). */
  readonly fsync?: boolean;
  /** Start the comparison proxies, HAProxy and pgpool-II (default true). */
  readonly comparisonProxies?: boolean;
  /** @deprecated use comparisonProxies */
  readonly peers?: boolean;
  /** Health-check interval of the checker that re-points the PgBouncer pools (default 500 ms). */
  readonly healthCheckIntervalMs?: number;
  /** Bound on `up` (default 90 s). */
  readonly startTimeoutMs?: number;
  /** `loopback` (default) or `namespaces` (REHEARSAL_NETWORKS). */
  readonly network?: RehearsalNetwork;
  /**
   * Cores of this machine per vCPU of an instance's class: each PostgreSQL instance runs under a CPU
   * budget of vCPUs x this (cpu-budgets.ts). 0 = no budgets (default; `up --from` sets 0.1).
   */
  readonly coresPerVcpu?: number;
  /**
   * vCPUs of the pooler host the pooling tier stands in for: with CPU budgets, the PgBouncer processes of
   * both endpoints share one budget of poolerVcpus x coresPerVcpu, and HAProxy and pgpool-II each get one
   * of the same size (default REHEARSAL_POOLER_VCPUS).
   */
  readonly poolerVcpus?: number;
}

/** Every setting with its default (the deprecated `peers` is read into comparisonProxies). */
export type ResolvedSettings = Required<Omit<RehearsalSettings, 'peers'>>;

/** What `Rehearsal.up` starts: the rehearsal's settings and the deployment it rehearses. */
export interface RehearsalSpec {
  readonly settings: RehearsalSettings;
  /**
   * The deployment rehearsed (`rehearse up --from`): its endpoints, consumer VPCs, consumers and names.
   * Default: none, a fixed consumer VPC `app` with a read-only and a read/write endpoint.
   */
  readonly deployment?: RehearsedDeployment;
}

/**
 * Where everything listens: hosts at .2, .3, ... like separate machines; endpoints at .101 and up; in
 * the loopback block, or with `network: 'namespaces'` at the same last octets of the block's 198.18 /24.
 */
export interface AddressPlan {
  readonly writer: string;
  readonly replicas: ReadonlyArray<string>;
  readonly readWrite: string;
  readonly readOnly: string;
  readonly haproxy: string;
  readonly pgpool: string;
}
