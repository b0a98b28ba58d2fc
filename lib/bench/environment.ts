/** The machine and the versions a bench ran on, recorded with every result. */
import { spawnSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { findPgBouncer, findPostgres15BinDir } from '../rehearsal';
import { pgbenchPath } from './pgbench';
import { benchShape } from './scope';
import { round } from './stats';
import type { BenchEnvironment, ScenarioName } from './types';

function version(program: string, args: string[], pattern: RegExp): string {
  // Some print their version on stderr (pgpool).
  const r = spawnSync(program, args, { encoding: 'utf8', timeout: 5000 });
  if (r.error !== undefined) return 'not found';
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return pattern.exec(out)?.[1] ?? (out.split('\n')[0] ?? '').trim();
}

export function hostInfo(): BenchEnvironment['host'] {
  return {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    kernel: release(),
    node: process.version,
    rehearsal: benchShape().description,
  };
}

/** The PgBouncer the rehearsal runs (make pgbouncer's build), not whatever is on PATH. */
function pgbouncerVersion(): string {
  try {
    return version(findPgBouncer(), ['--version'], /PgBouncer ([\d.]+)/);
  } catch {
    return 'not found';
  }
}

export function versions(): Record<string, string> {
  return {
    postgresql: version(join(findPostgres15BinDir(), 'postgres'), ['--version'], /(\d+\.\d+)/),
    pgbench: version(pgbenchPath(), ['--version'], /(\d+\.\d+)/),
    pgbouncer: pgbouncerVersion(),
    haproxy: version('haproxy', ['-v'], /version ([\d.]+)/),
    pgpool: version('pgpool', ['--version'], /version ([\d.]+)/),
    node: process.version,
  };
}

/** How each seed's load was scaled to this machine (also written per scenario). */
export function scaling(cores: number, quick: boolean): Record<ScenarioName, string> {
  const q = quick ? ' (--quick: shorter still, fewer waves)' : '';
  return {
    read_only_endpoint: `The seed ran pgbench -C waves of 100 clients every 10 s for 10 min against two db.r5.large readers (2 vCPU each, 1,600 max_connections); here writer, both replicas, the proxies and every pgbench share ${cores} cores, so waves of 100 clients start every 4 s for a 30 s run with max_connections 300 per replica (enough that the reader-endpoint analog never refuses a client)${q}.`,
    reader_added: `The seed offered ~1,742 clients to two readers capped at 1,600 connections and added a third; here 600 clients (6 waves of 100, 3 s apart) meet two replicas capped at 100 application connections each, a third is added after 18 s of a 36 s run, so demand is 3x the reader-endpoint analog's capacity before and 2x after, more than the seed's 1.87x${q}.`,
    connect_overhead: `The seed looped 1,000 sequential open+query and query-only calls from an EC2 client to RDS / RDS Proxy; here 1,000 sequential loops run over loopback TLS on the same ${cores} cores, so absolute times lack the network round trip (~0.3-0.5 ms in a datacenter) and compare the servers' own cost; the Lambda part runs the read handler's bundle under the Lambda runtime interface emulator on Node.js 24 (no API Gateway)${q}.`,
    transaction_pooling: `No seed measured it; what RDS Proxy would do (pin each client that prepares statements to a server connection) is its documented behaviour, stood in for by the direct path (a backend per client); ${quick ? '20 clients x 50' : '60 clients x 200'} named-statement queries against a pool of 10 server connections on one replica, then ${quick ? 4 : 12} cancel requests.`,
    pgbouncer_engine: `No seed: the PgBouncer engine's drills on two hosts booted as on AWS (Debian 13, systemd, cloud-init, the deployed user data), each host the rehearsal's 2 vCPUs on the same ${cores} cores as the database; ${quick ? 2 : 4} read-only clients, 1 writer and 4 clients through the load balancer stand-in, whose health checks are the target groups' (every 10 s); 8 clients at a PgBouncer process's kill -9, ${quick ? 2 : 4} readers while a reader is down 5 s, one host booted with a broken packages object${q}.`,
    engines: `The seed looped one Go client at a time from EC2 to RDS and to RDS Proxy; here the same pgbench loads (${quick ? '300 query and 50 open+query loops, 16 clients for 4 s, one round' : '1,000 query and 100 open+query loops, 16 clients for 8 s, three interleaved rounds'}) run in turn directly to the writer, through the rehearsal's read/write endpoint (the RDS Proxy analog) and through two PgBouncer engine hosts booted as on AWS behind the load balancer stand-in, all on the same ${cores} cores; then ${quick ? 4 : 8} writers per path through one writer failover${q}.`,
    read_write_split: `The seed's sysbench read_write ran on separate Aurora instances; here each instance is pinned to its own core (writer on CPU 0, replicas on CPU 1) so the writer's CPU is a bottleneck as on one instance, with 12 clients doing 80% point reads / 20% single-row updates for 20 s per mode${q}.`,
  };
}

export function benchEnvironment(quick: boolean): BenchEnvironment {
  const host = hostInfo();
  return { host, versions: versions(), scaling: scaling(host.cores, quick) };
}
