/**
 * The work directory's layout: every file and directory the rehearsal keeps under it, named once.
 * The rehearsal, the health checker (a separate process), `status` and `down` all find them here.
 *
 *   <workDir>/state.json, secrets.json, health.json, health-supervisor.json
 *   <workDir>/nodes/<node>/{data,socket}          one PostgreSQL instance each
 *   <workDir>/pgbouncer/ (a fleet host's FLEET_PATHS below it), poolers.json   processes rw-1, ro-3, ...
 *   <workDir>/comparison/haproxy/, comparison/pgpool/ (the comparison proxies)
 *   <workDir>/tls/{ca.crt,server.crt,server.key}
 *   <workDir>/logs/<process>.log                 kept by `down`
 */
import { join } from 'node:path';
import { FLEET_PATHS, fleetPath } from '../model/pgbouncer-fleet';

export interface NodePaths {
  readonly dir: string;
  readonly dataDir: string;
  readonly socketDir: string;
  /** initdb's password file, present only while initdb runs. */
  readonly passwordFile: string;
  readonly logFile: string;
}

export interface PgBouncerPaths {
  readonly configFile: string;
  readonly pidFile: string;
  readonly socketDir: string;
  readonly logFile: string;
}

export interface HaproxyPaths {
  readonly dir: string;
  readonly configFile: string;
  /** Runtime API socket (add server at runtime: addReplica). */
  readonly adminSocket: string;
  readonly logFile: string;
}

export interface PgpoolPaths {
  readonly dir: string;
  readonly configFile: string;
  readonly passwordFile: string;
  readonly pcpFile: string;
  readonly hbaFile: string;
  readonly pidFile: string;
  readonly logFile: string;
}

export interface TlsPaths {
  readonly dir: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

/** The certificate files inside a TLS directory (the rehearsal's, or any other the CA is made in). */
export function tlsPaths(dir: string): TlsPaths {
  return { dir, caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}

/** Where the PgBouncer engine's hosts keep what they share, each host's own files, and a deployment's fleet. */
export interface PoolerFleetPaths {
  /** What the fleet's hosts share: the user data's values, the emulator's pid, the hosts booted (pooler-host.ts). */
  readonly file: string;
  /** The AWS emulator's files and the packages object. */
  readonly dir: string;
  /** One directory per booted host. */
  readonly hostsDir: string;
  readonly loadBalancerDir: string;
  /** A rehearsed deployment's fleet: hosts, load balancer, logins (pooler-fleet.ts). */
  readonly deploymentFile: string;
}

export class WorkDirLayout {
  readonly stateFile: string;
  readonly secretsFile: string;
  readonly healthFile: string;
  /** What the health checker's supervisor last did (restarts, exits, giving up). */
  readonly healthSupervisorFile: string;
  readonly nodesDir: string;
  readonly pgbouncerDir: string;
  /** Every process of the rehearsal, by pid (processes.ts): `up`, the checker and the supervisor add to it. */
  readonly processesFile: string;
  readonly comparisonProxiesDir: string;
  readonly logsDir: string;
  /** Programs the servers run from here, not from the checkout (see installPgBouncer). */
  readonly binDir: string;
  readonly tls: TlsPaths;
  readonly haproxy: HaproxyPaths;
  readonly pgpool: PgpoolPaths;
  readonly healthCheckerLog: string;
  readonly healthSupervisorLog: string;
  /** The PgBouncer engine's booted hosts (pooler-host.ts, pooler-fleet.ts): what a new `up` clears. */
  readonly poolerFleet: PoolerFleetPaths;

  constructor(readonly workDir: string) {
    this.stateFile = join(workDir, 'state.json');
    this.secretsFile = join(workDir, 'secrets.json');
    this.healthFile = join(workDir, 'health.json');
    this.healthSupervisorFile = join(workDir, 'health-supervisor.json');
    this.nodesDir = join(workDir, 'nodes');
    this.pgbouncerDir = join(workDir, 'pgbouncer');
    this.processesFile = join(workDir, 'processes.json');
    this.comparisonProxiesDir = join(workDir, 'comparison');
    this.logsDir = join(workDir, 'logs');
    this.binDir = join(workDir, 'bin');
    this.tls = tlsPaths(join(workDir, 'tls'));
    const haproxyDir = join(this.comparisonProxiesDir, 'haproxy');
    this.haproxy = { dir: haproxyDir, configFile: join(haproxyDir, 'haproxy.cfg'), adminSocket: join(haproxyDir, 'admin.sock'), logFile: this.log('haproxy') };
    const pgpoolDir = join(this.comparisonProxiesDir, 'pgpool');
    this.pgpool = {
      dir: pgpoolDir,
      configFile: join(pgpoolDir, 'pgpool.conf'),
      passwordFile: join(pgpoolDir, 'pool_passwd'),
      pcpFile: join(pgpoolDir, 'pcp.conf'),
      hbaFile: join(pgpoolDir, 'pool_hba.conf'),
      pidFile: join(pgpoolDir, 'pgpool.pid'),
      logFile: this.log('pgpool'),
    };
    this.healthCheckerLog = this.log('health-checker');
    this.healthSupervisorLog = this.log('health-supervisor');
    this.poolerFleet = {
      file: join(workDir, 'pooler-fleet.json'),
      dir: join(workDir, 'pooler-fleet'),
      hostsDir: join(workDir, 'pooler-hosts'),
      loadBalancerDir: join(workDir, 'pooler-load-balancer'),
      deploymentFile: join(workDir, 'pooler-deployment.json'),
    };
  }

  /** Log of a tracked process, by its name. */
  log(processName: string): string {
    return join(this.logsDir, `${processName}.log`);
  }

  node(name: string): NodePaths {
    const dir = join(this.nodesDir, name);
    return { dir, dataDir: join(dir, 'data'), socketDir: join(dir, 'socket'), passwordFile: join(dir, 'pwfile'), logFile: this.log(name) };
  }

  /** A PgBouncer process by its fleet name (fleetProcessName: rw-1): where the fleet's files put it below pgbouncerDir. */
  pgbouncer(fleetName: string): PgBouncerPaths {
    const run = fleetPath(this.pgbouncerDir, `${FLEET_PATHS.runDir}/${fleetName}`);
    return {
      configFile: fleetPath(this.pgbouncerDir, `${FLEET_PATHS.dir}/${fleetName}.ini`),
      pidFile: join(run, 'pgbouncer.pid'),
      socketDir: run,
      logFile: this.log(`pgbouncer-${fleetName}`),
    };
  }

  /** What `down` removes; logs stay for a post-mortem. */
  get disposable(): ReadonlyArray<string> {
    return [this.binDir, this.nodesDir, this.pgbouncerDir, this.comparisonProxiesDir, this.tls.dir, this.secretsFile, this.healthFile, this.healthSupervisorFile, this.processesFile, this.stateFile];
  }
}
