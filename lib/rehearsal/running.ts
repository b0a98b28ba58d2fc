/**
 * A rehearsal's live record, shared by the operations in their own files (start, status, failover,
 * addReplica): the state (saved to the work dir after every change), the secrets, the server user,
 * and what follows from them (endpoints, the current writer, tracked processes).
 */
import { RehearsalOperationError, RehearsalStateError } from './errors';
import { WorkDirLayout } from './layout';
import { rehearsalNetwork, type NetworkSettings, type RehearsalNetworkMode } from './network/rehearsal-network';
import type { OsUser } from './os-user';
import { pgBouncerPoolSizes } from './pgbouncer';
import { adminTarget, type PostgresContext } from './postgres';
import { isOurs, readProcesses, updateProcesses, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { readHealth, writeState, type HealthReport, type NodeState, type RehearsalState } from './state';
import type { Endpoint, Endpoints, PoolSizes } from './types';

export class RunningRehearsal {
  readonly layout: WorkDirLayout;
  /** The network it runs on, chosen once from the settings. */
  readonly network: RehearsalNetworkMode;

  constructor(
    public state: RehearsalState,
    readonly secrets: Secrets,
    readonly user: OsUser | undefined,
  ) {
    this.layout = new WorkDirLayout(state.settings.workDir);
    this.network = rehearsalNetwork(state.settings, state.deployment);
  }

  /** What the rehearsal's names derive from: its address block and the deployment rehearsed. */
  get rehearsed(): NetworkSettings {
    return { addressBlock: this.state.settings.addressBlock, deployment: this.state.deployment };
  }

  /** Writes the state file (after every change: other processes read it). */
  save(): void {
    writeState(this.layout.workDir, this.state);
  }

  ctx(binDir = ''): PostgresContext {
    return { binDir, user: this.user, settings: this.state.settings, deployment: this.state.deployment, tls: this.state.tls, secrets: this.secrets };
  }

  /** Records a started process at once, so a failure later still stops it. */
  track(proc: TrackedProcess): TrackedProcess {
    updateProcesses(this.layout.processesFile, (ps) => [...ps, proc]);
    return proc;
  }

  /** Every process the rehearsal started, in start order (the checker and the supervisor add PgBouncer processes after `up`). */
  allProcesses(): TrackedProcess[] {
    return readProcesses(this.layout.processesFile);
  }

  /** The latest tracked process of that name. */
  process(name: string): TrackedProcess {
    const proc = [...this.allProcesses()].reverse().find((p) => p.name === name);
    if (proc === undefined) throw new RehearsalOperationError(`no process named ${name}`);
    return proc;
  }

  hasLive(kind: TrackedProcess['kind']): boolean {
    return this.allProcesses().some((p) => p.kind === kind && isOurs(p));
  }

  get writerNode(): NodeState {
    const node = this.state.nodes.find((n) => n.name === this.state.writerName);
    if (node === undefined) throw new RehearsalStateError(`state names writer ${this.state.writerName}, which is not a node`);
    return node;
  }

  get replicaNodes(): NodeState[] {
    return this.state.nodes.filter((n) => n.name !== this.state.writerName);
  }

  health(): HealthReport | undefined {
    return readHealth(this.layout.healthFile);
  }

  endpoint(name: string, host: string): Endpoint {
    return { name, host, port: this.state.settings.port, database: this.secrets.database, user: this.secrets.appUser, password: this.secrets.appPassword, caFile: this.state.tls.caFile };
  }

  adminEndpoint(node: NodeState): Endpoint {
    return { ...adminTarget(this.ctx(), node), name: node.name };
  }

  get endpoints(): Endpoints {
    const p = this.state.plan;
    const withComparisonProxies = this.allProcesses().some((x) => x.kind === 'haproxy');
    return {
      readWrite: this.endpoint('read-write', p.readWrite),
      readOnly: this.endpoint('read-only', p.readOnly),
      ...(withComparisonProxies ? { haproxy: this.endpoint('haproxy', p.haproxy), pgpool: this.endpoint('pgpool', p.pgpool) } : {}),
      writer: this.endpoint(this.writerNode.name, this.writerNode.address),
      replicas: this.replicaNodes.map((n) => this.endpoint(n.name, n.address)),
    };
  }

  get poolSizes(): PoolSizes {
    return {
      readWrite: pgBouncerPoolSizes(this.state.pgbouncer.readWrite).poolSize,
      readOnly: pgBouncerPoolSizes(this.state.pgbouncer.readOnly).poolSize,
    };
  }
}
