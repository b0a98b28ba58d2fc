/**
 * The health checker RDS Proxy has built in and PgBouncer 1.18 lacks: PgBouncer round-robins a host
 * list but keeps handing out a dead host, and never notices a promoted replica. Every interval this
 * probes each instance (TLS login, pg_is_in_recovery()), then rewrites the endpoints' [databases]
 * host lists when the picture changed and RELOADs them through the admin console:
 * - read-only endpoint: the live replicas (a dead one drops out; one that comes back rejoins);
 * - read/write endpoint: the instance that is not in recovery (re-pointed after a failover).
 *
 * It runs as its own process, child of its supervisor (health-supervisor.ts: restarted when it exits),
 * so it keeps watching after the CLI that started the rehearsal has exited. It writes what it saw to
 * the health file.
 */
import { WorkDirLayout } from './layout';
import { adminTarget } from './postgres';
import { consoleTarget, reloadPgBouncer, rewritePgBouncerIni } from './pgbouncer';
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

const same = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

export class HealthChecker {
  private readWriteHosts: string[];
  private readOnlyHosts: string[];
  private reloads = 0;
  private stopped = false;
  private readonly layout: WorkDirLayout;

  constructor(workDir: string) {
    this.layout = new WorkDirLayout(workDir);
    // No rehearsal there: fail at start (a quick exit to the supervisor), not in every round.
    this.state();
    // Unknown until this process writes them: a restarted checker cannot tell what its predecessor
    // left in the ini files, so its first round writes and reloads both endpoints.
    this.readWriteHosts = [];
    this.readOnlyHosts = [];
  }

  private state(): RehearsalState {
    const state = readState(this.layout.workDir);
    if (state === undefined) throw new Error(`no rehearsal state in ${this.layout.workDir}`);
    return state;
  }

  /** One round: probe, re-point what changed, report. */
  async checkOnce(): Promise<HealthReport> {
    // Re-read each round: failover() records the writer it promoted.
    const state = this.state();
    const secrets = readSecrets(this.layout.secretsFile);
    const results = await Promise.all(state.nodes.map(async (n) => ({ node: n, role: await probeNode(state, secrets, n) })));
    const writers = results.filter((r) => r.role === 'writer').map((r) => r.node);
    // Two writers only after a split brain (an old writer restarted): trust the one failover chose.
    const writer = writers.find((n) => n.name === state.writerName) ?? writers[0];
    const liveReplicas = results.filter((r) => r.role === 'replica').map((r) => r.node.address);
    let lastError: string | undefined;

    const apply = async (which: 'readWrite' | 'readOnly', hosts: string[]): Promise<void> => {
      const current = which === 'readWrite' ? this.readWriteHosts : this.readOnlyHosts;
      // With nothing healthy, keep the last list: connections fail, as they do on RDS Proxy.
      if (hosts.length === 0 || same(hosts, current)) return;
      const endpoint = state.pgbouncer[which];
      try {
        rewritePgBouncerIni(endpoint, this.layout.pgbouncer(endpoint.processName), hosts);
        await reloadPgBouncer(consoleTarget(endpoint.spec, secrets, state.tls.caFile));
        if (which === 'readWrite') this.readWriteHosts = hosts;
        else this.readOnlyHosts = hosts;
        this.reloads++;
      } catch (err) {
        lastError = `${which}: ${(err as Error).message}`;
      }
    };
    await apply('readWrite', writer === undefined ? [] : [writer.address]);
    await apply('readOnly', liveReplicas);

    const report: HealthReport = {
      checkedAt: new Date().toISOString(),
      pid: process.pid,
      writer: writer?.address,
      liveReplicas,
      readWriteHosts: this.readWriteHosts,
      readOnlyHosts: this.readOnlyHosts,
      reloads: this.reloads,
      ...(lastError === undefined ? {} : { lastError }),
    };
    writeHealth(this.layout.healthFile, report);
    return report;
  }

  async run(intervalMs: number): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      try {
        await this.checkOnce();
      } catch (err) {
        process.stderr.write(`${new Date().toISOString()} health check failed: ${(err as Error).message}\n`);
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  }

  stop(): void {
    this.stopped = true;
  }
}

/** Entry point of the health-checker process: `node health-checker.js <workDir> <intervalMs>`. */
export async function main(argv: string[]): Promise<void> {
  const [workDir, interval] = argv;
  if (workDir === undefined) throw new Error('usage: health-checker <workDir> [intervalMs]');
  const checker = new HealthChecker(workDir);
  const stop = (): void => {
    checker.stop();
    // A round in flight is bounded by its probe timeouts; do not wait for it.
    setTimeout(() => process.exit(0), 50).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await checker.run(Number(interval ?? 500));
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`health checker: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
