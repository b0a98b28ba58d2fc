/**
 * A local rehearsal of the deployed data path on one machine, from real parts: a PostgreSQL 15 writer
 * and streaming replicas (each its own loopback "host"), PgBouncer read/write and read-only endpoints
 * sized like the AWS proxy, a supervised health checker that re-points them, and the HAProxy and pgpool-II comparison proxies.
 *
 *   const r = await Rehearsal.up({ replicas: 2 });   // validated first; a failed start stops what it started
 *   await Rehearsal.up(rehearsalFromDeployment('cdk.out'));   // { settings, deployment }: a deployment rehearsed
 *   r.endpoints.readOnly ...; await r.status(); await r.killReplica(0); await r.failover();
 *   await r.down();                                   // by pid, verified
 *
 * The CLI (`aurora-proxy-kit rehearse`, cli.ts) uses the same API; `Rehearsal.attach(workDir)` picks up a running one.
 * The operations live in their own files (start, status, failover, add-replica); this is the facade.
 */
import { addReplica } from './add-replica';
import { downState, downWorkDir, stopTracked, type DownReport } from './down';
import { findBinaries } from './binaries';
import { removeNodeBudgets } from './cpu-budgets';
import { deploymentConsumers, type RehearsedConsumerRun } from './deployment-consumers';
import { RehearsalOperationError, RehearsalStateError } from './errors';
import { failover } from './failover';
import { healthCheckerStatus } from './health-status';
import { WorkDirLayout } from './layout';
import { rehearsalNetwork, type NetworkSettings, type RehearsalNetworkMode } from './network/rehearsal-network';
import { serverOsUser } from './os-user';
import { readDeploymentFleet, startDeploymentFleet, type DeploymentFleet } from './pooler-fleet';
import { bootPoolerHost, startPoolerHost } from './pooler-host';
import type { BootingPoolerHost, PoolerHost, PoolerHostOptions } from './pooler-host-types';
import { startPoolerLoadBalancer, type PoolerLoadBalancer } from './pooler-load-balancer';
import { consoleQuery } from './pgbouncer';
import { poolerSocketDir, readPoolers, type PoolerEndpoint } from './poolers';
import { assertWorkDirUsable } from './preflight';
import { launchNode, waitReady } from './postgres';
import { isOurs, killProcess, readProcesses, stopProcess } from './processes';
import { RunningRehearsal } from './running';
import { consumerPassword, newSecrets, readSecrets, writeSecrets } from './secrets';
import { resolveSettings, validateSettings, type AddressPlan, type RehearsalSettings, type RehearsalSpec, type ResolvedSettings } from './settings';
import { waitFor } from './sql';
import { initialState, listeners, prepareWorkDir, startProcesses, type UpProgress } from './start';
import { readState, type HealthReport } from './state';
import { readStatus } from './status';
import type { AddReplicaReport, Endpoint, Endpoints, FailoverReport, HealthCheckerStatus, KillReport, PoolSizes, RehearsalStatus } from './types';

export type { UpPhase, UpProgress } from './start';

export class Rehearsal {
  private constructor(private readonly run: RunningRehearsal) {}

  get workDir(): string {
    return this.run.layout.workDir;
  }

  get settings(): ResolvedSettings {
    return this.run.state.settings;
  }

  get plan(): AddressPlan {
    return this.run.state.plan;
  }

  /** Picks up the rehearsal running in `workDir` (for status, down, drills from another process). */
  static attach(workDir: string): Rehearsal {
    const layout = new WorkDirLayout(resolveSettings({ workDir }).workDir);
    const state = readState(layout.workDir);
    if (state === undefined) throw new RehearsalStateError(`no rehearsal in ${layout.workDir} (no state.json): start one with \`rehearse up\``);
    return new Rehearsal(new RunningRehearsal(state, readSecrets(layout.secretsFile), serverOsUser()));
  }

  /** The network it runs on: its address plan, AWS-shaped names (connectionNames, null on loopback), ... */
  get network(): RehearsalNetworkMode {
    return this.run.network;
  }

  /** Its address block and the deployment rehearsed: what its AWS-shaped names and network plan derive from. */
  get rehearsed(): NetworkSettings {
    return this.run.rehearsed;
  }

  /**
   * Validates, checks binaries and addresses, then starts everything; on failure stops what it started. `progress` hears each step.
   * Takes the settings, or { settings, deployment } for a deployment rehearsed.
   */
  static async up(input: RehearsalSettings | RehearsalSpec = {}, progress: UpProgress = () => undefined): Promise<Rehearsal> {
    progress('checks', 'settings, binaries, work dir, free addresses');
    const { settings: given, deployment }: RehearsalSpec = 'settings' in input ? input : { settings: input };
    const resolved = resolveSettings(given);
    validateSettings(resolved);
    const network = rehearsalNetwork(resolved, deployment).available();
    const settings: ResolvedSettings = { ...resolved, network: network.name };
    const binaries = findBinaries({ comparisonProxies: settings.comparisonProxies });
    const user = serverOsUser();
    assertWorkDirUsable(settings.workDir, user);
    if (readProcesses(new WorkDirLayout(settings.workDir).processesFile).some((p) => isOurs(p))) {
      throw new RehearsalStateError(`a rehearsal is already running in ${settings.workDir}: run \`rehearse down --work-dir ${settings.workDir}\` first`);
    }
    await network.assertFree(listeners(settings, network.addressPlan(settings.replicas)));

    const layout = new WorkDirLayout(settings.workDir);
    prepareWorkDir(layout, user);
    const secrets = newSecrets(deployment);
    writeSecrets(layout.secretsFile, secrets);
    const run = new RunningRehearsal(await initialState(settings, deployment, network, layout, secrets, user, binaries), secrets, user);
    run.save();
    const rehearsal = new Rehearsal(run);
    try {
      await network.setUp((detail) => progress('network', detail));
      await startProcesses(run, binaries, progress);
      // A PgBouncer engine deployment: its consumers reach its own hosts, booted from its user data.
      if (deployment?.fleet !== undefined) await startDeploymentFleet(run, (detail) => progress('pooler hosts', detail));
    } catch (err) {
      // Stop everything this attempt started, by pid, before reporting.
      await rehearsal.stopAll().catch(() => undefined);
      await network.tearDown().catch(() => undefined);
      try {
        removeNodeBudgets(settings);
      } catch {
        // Reported by the next `down`; the start error is what the caller needs.
      }
      throw err;
    }
    return rehearsal;
  }

  get endpoints(): Endpoints {
    return this.run.endpoints;
  }

  /** The rehearsed deployment's consumers (`up --from`), each with its namespace and environment. */
  consumers(): RehearsedConsumerRun[] {
    return deploymentConsumers(this.run.state.settings, this.run.rehearsed, this.run.secrets, this.run.state.tls.caFile);
  }

  /**
   * Runs the PgBouncer engine's host bootstrap on a host of the data namespace (network namespaces)
   * and starts its processes, tracked like the rest (pooler-host.ts).
   */
  startPoolerHost(options: PoolerHostOptions, timeoutMs?: number): Promise<PoolerHost> {
    return startPoolerHost(this.run, options, timeoutMs);
  }

  /** The password of a rehearsed deployment's consumer user (`up --from`); undefined for another user. */
  consumerLogin(user: string): string | undefined {
    return consumerPassword(this.run.secrets, user);
  }

  /** A PgBouncer engine deployment's fleet (`up --from`): its booted hosts and load balancer; undefined for RDS Proxy. */
  deploymentFleet(): DeploymentFleet | undefined {
    return readDeploymentFleet(this.run);
  }

  /**
   * Boots the fleet's next pooler host with some of its user data's values replaced, without waiting for it
   * (a host meant to fail, for a drill); tracked like the rest (pooler-host.ts).
   */
  bootPoolerHost(options: PoolerHostOptions, values: Readonly<Record<string, string>>): Promise<BootingPoolerHost> {
    return bootPoolerHost(this.run, options, values);
  }

  /** The fleet's load balancer stand-in in front of `hosts` (HAProxy with the target groups' health checks). */
  startPoolerLoadBalancer(hosts: ReadonlyArray<PoolerHost>, options?: { readonly tcpIdleTimeoutSeconds?: number }): Promise<PoolerLoadBalancer> {
    return startPoolerLoadBalancer(this.run, hosts, options);
  }

  /** The superuser on an instance (for drills and checks that look behind the proxy). */
  adminEndpoint(nodeName: string): Endpoint {
    const node = this.run.state.nodes.find((n) => n.name === nodeName);
    if (node === undefined) throw new RehearsalOperationError(`no node named ${nodeName}`);
    return this.run.adminEndpoint(node);
  }

  /** Database roles the application's traffic uses on the instances: the clients' own, and the read-only endpoint's server login. */
  get applicationRoles(): string[] {
    return [this.run.secrets.appUser, this.run.secrets.readOnlyServerUser];
  }

  /** Server connections each pool target may get: poolSizing() of the settings (types.ts PoolSizes). */
  get poolSizes(): PoolSizes {
    return this.run.poolSizes;
  }

  health(): HealthReport | undefined {
    return this.run.health();
  }

  /** Whether the health checker is still watching: fresh or stale report, its supervisor's restarts. */
  healthChecker(): HealthCheckerStatus {
    return healthCheckerStatus(this.run);
  }

  status(): Promise<RehearsalStatus> {
    return readStatus(this.run);
  }

  /** Crashes replica `index` (0-based among the current replicas) and waits until the read-only pool drops it. */
  async killReplica(index: number, timeoutMs = 15000): Promise<KillReport> {
    const node = this.run.replicaNodes[index];
    if (node === undefined) throw new RehearsalOperationError(`killReplica(${index}): there are ${this.run.replicaNodes.length} replicas (index from 0)`);
    const started = Date.now();
    await killProcess(this.run.process(node.name));
    await waitFor(`the health checker to drop ${node.name} from the read-only pool`, timeoutMs, async () => {
      const h = this.health();
      return h !== undefined && Date.parse(h.checkedAt) > started && !h.readOnlyHosts.includes(node.address) ? true : undefined;
    }, 50);
    return { name: node.name, address: node.address, droppedAfterMs: Date.now() - started };
  }

  /** Stops instance `name` with a clean fast shutdown, as stopping an instance does; startInstance starts it again. */
  async stopInstance(name: string): Promise<void> {
    const left = await stopProcess(this.run.process(name));
    if (left.length > 0) throw new RehearsalOperationError(`stopInstance(${name}): still running: ${left.join(', ')}`);
  }

  /** Starts a stopped instance again on its data directory (a replica resumes streaming) and waits until it takes logins. */
  async startInstance(name: string, timeoutMs = 30000): Promise<void> {
    const node = this.run.state.nodes.find((n) => n.name === name);
    if (node === undefined) throw new RehearsalOperationError(`startInstance(${name}): no node of that name`);
    if (this.pidOf(name) !== undefined) throw new RehearsalOperationError(`startInstance(${name}): it is running`);
    const ctx = this.run.ctx(findBinaries({ comparisonProxies: this.settings.comparisonProxies }).postgresBinDir);
    await waitReady(ctx, node, this.run.track(launchNode(ctx, node)), timeoutMs);
  }

  /** Writer failover (failover.ts); returns the timings. */
  failover(timeoutMs = 30000): Promise<FailoverReport> {
    return failover(this.run, timeoutMs);
  }

  /** Adds a streaming replica while everything runs (add-replica.ts). */
  addReplica(timeoutMs = 60000): Promise<AddReplicaReport> {
    return addReplica(this.run, timeoutMs);
  }

  /**
   * Runs one PgBouncer admin console command (SHOW STATS, or SET for a measurement) on every process of an
   * endpoint, through each process's own Unix socket; the rows of each process, in the registry's order.
   */
  async poolerConsole(endpoint: PoolerEndpoint, command: string): Promise<Array<Array<Record<string, string>>>> {
    const port = this.run.state.pgbouncer[endpoint].listenPort;
    const records = readPoolers(this.run.layout).filter((p) => p.pooler.endpoint === endpoint && isOurs(p));
    if (records.length === 0) throw new RehearsalOperationError(`poolerConsole(${endpoint}): no PgBouncer process of that endpoint is running`);
    return Promise.all(records.map((p) => consoleQuery(poolerSocketDir(this.run.layout, this.run.state.pgbouncer, p), port, this.run.secrets, command)));
  }

  /** Pid of a tracked process that is still ours (postmasters for CPU accounting, ...). */
  pidOf(name: string): number | undefined {
    const proc = [...this.run.allProcesses()].reverse().find((p) => p.name === name);
    return proc !== undefined && isOurs(proc) ? proc.pid : undefined;
  }

  /** Stops every tracked process, newest first; returns the pids that survived (none on success). */
  private stopAll(): Promise<number[]> {
    return stopTracked(this.run.allProcesses());
  }

  /**
   * Stops everything by pid, verifies nothing is left, and removes the data (logs are kept).
   * Idempotent: once down, another call stops nothing and reports an empty `stopped`.
   */
  down(): Promise<DownReport> {
    // The state on disk when it is still this rehearsal's: another process may have added to it (addReplica).
    const onDisk = readState(this.run.layout.workDir);
    const state = onDisk?.startedAt === this.run.state.startedAt ? onDisk : this.run.state;
    return downState(this.run.layout, state);
  }

  /** `down` for a work dir without attaching: also fine when nothing runs there, or there is no work dir. */
  static downIn(workDir: string): Promise<DownReport> {
    return downWorkDir(resolveSettings({ workDir }).workDir);
  }
}
