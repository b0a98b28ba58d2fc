/**
 * The health checker RDS Proxy has built in and PgBouncer lacks: PgBouncer never notices that a server
 * died or that a replica was promoted. Every interval this probes each instance (TLS login,
 * pg_is_in_recovery()), then re-points the PgBouncer processes (poolers.ts), RDS Proxy's own behaviour:
 * - read/write endpoint: every process re-pointed at the instance that is not in recovery (RELOAD each);
 * - read-only endpoint: a group of processes per live replica: a dead or promoted replica's group is
 *   stopped, a replica that joined or came back gets one (the others RELOAD their [peers]).
 * A process that exits is the supervisor's (health-supervisor.ts), whose child this is, so it keeps watching
 * after the CLI that started the rehearsal has exited. It writes what it saw to the health file.
 */
import { WorkDirLayout } from './layout';
import { serverOsUser, type OsUser } from './os-user';
import { Poolers } from './poolers';
import { adminTarget } from './postgres';
import { readSecrets, type Secrets } from './secrets';
import { query, sleep } from './sql';
import { readState, writeHealth, type HealthReport, type NodeState, type RehearsalState } from './state';

export type ProbeResult = 'writer' | 'replica' | 'down';

export async function probeNode(state: RehearsalState, secrets: Secrets, node: NodeState, timeoutMs = 1000): Promise<ProbeResult> {
  try {
    const rows = await query<{ r: boolean }>(adminTarget({ secrets, tls: state.tls }, node), 'SELECT pg_is_in_recovery() AS r', undefined, timeoutMs);
    return rows[0]?.r === true ? 'replica' : 'writer';
  } catch {
    return 'down';
  }
}

/** How long a round waits for a new group's PgBouncer processes to answer. */
const POOLER_START_TIMEOUT_MS = 5000;

export class HealthChecker {
  private reloads = 0;
  private readonly layout: WorkDirLayout;
  private readonly user: OsUser | undefined;

  constructor(workDir: string) {
    this.layout = new WorkDirLayout(workDir);
    // No rehearsal there: fail at start (a quick exit to the supervisor), not in every round.
    this.state();
    this.user = serverOsUser();
  }

  private state(): RehearsalState {
    const state = readState(this.layout.workDir);
    if (state === undefined) throw new Error(`no rehearsal state in ${this.layout.workDir}`);
    return state;
  }

  /** One round: probe, re-point the poolers, report. */
  async checkOnce(): Promise<HealthReport> {
    // Re-read each round: failover() records the writer it promoted, addReplica() the nodes.
    const state = this.state();
    const secrets = readSecrets(this.layout.secretsFile);
    const results = await Promise.all(state.nodes.map(async (n) => ({ node: n, role: await probeNode(state, secrets, n) })));
    const writers = results.filter((r) => r.role === 'writer').map((r) => r.node);
    // Two writers only after a split brain (an old writer restarted): trust the one failover chose.
    const writer = writers.find((n) => n.name === state.writerName) ?? writers[0];
    const liveReplicas = results.filter((r) => r.role === 'replica').map((r) => r.node.address);
    const poolers = new Poolers({ layout: this.layout, pgbouncer: state.pgbouncer, secrets, user: this.user });
    const errors: string[] = [];
    const step = async (what: string, change: () => Promise<unknown>): Promise<void> => {
      try {
        await change();
      } catch (err) {
        errors.push(`${what}: ${(err as Error).message}`);
      }
    };

    const readWrite = poolers.hosts('readWrite');
    if (writer !== undefined && !(readWrite.length === 1 && readWrite[0] === writer.address)) {
      await step('readWrite', async () => {
        await poolers.repoint('readWrite', writer.address);
        this.reloads++;
      });
    }
    // With no live replica, keep what runs: connections fail, as they do on RDS Proxy.
    if (liveReplicas.length > 0) {
      for (const host of poolers.hosts('readOnly').filter((h) => !liveReplicas.includes(h))) {
        await step(`readOnly ${host}`, async () => {
          await poolers.stopGroup('readOnly', host);
          this.reloads++;
        });
      }
      for (const host of liveReplicas.filter((h) => !poolers.hosts('readOnly').includes(h))) {
        await step(`readOnly ${host}`, async () => {
          await poolers.startGroup('readOnly', host, POOLER_START_TIMEOUT_MS);
          this.reloads++;
        });
      }
    }
    const report: HealthReport = {
      checkedAt: new Date().toISOString(),
      pid: process.pid,
      writer: writer?.address,
      liveReplicas,
      readWriteHosts: poolers.hosts('readWrite'),
      readOnlyHosts: poolers.hosts('readOnly'),
      reloads: this.reloads,
      ...(errors.length === 0 ? {} : { lastError: errors.join('; ') }),
    };
    writeHealth(this.layout.healthFile, report);
    return report;
  }

  /** Rounds until the process is stopped: SIGTERM's default ends a round in flight, whose every write is atomic. */
  async run(intervalMs: number): Promise<void> {
    for (;;) {
      const started = Date.now();
      try {
        await this.checkOnce();
      } catch (err) {
        process.stderr.write(`${new Date().toISOString()} health check failed: ${(err as Error).message}\n`);
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  }
}

/** Entry point of the health-checker process: `node health-checker.js <workDir> <intervalMs>`. */
export async function main(argv: string[]): Promise<void> {
  const [workDir, interval] = argv;
  if (workDir === undefined) throw new Error('usage: health-checker <workDir> [intervalMs]');
  await new HealthChecker(workDir).run(Number(interval ?? 500));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`health checker: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
