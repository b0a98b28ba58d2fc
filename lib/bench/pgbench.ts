/**
 * Debian's pgbench (PostgreSQL 15) as the load generator, over TLS like every client of the kit
 * (sslmode=verify-full against the rehearsal CA, password auth). TPS, latency and errors come from
 * pgbench's own output and per-transaction logs (-l): nothing is estimated on our side.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { findPostgres15BinDir, type Endpoint } from '../rehearsal';

/** The pgbench of the PostgreSQL 15 the rehearsal runs, else the one on PATH. */
export function pgbenchPath(): string {
  const candidate = join(findPostgres15BinDir(), 'pgbench');
  return existsSync(candidate) ? candidate : 'pgbench';
}

/** libpq environment for an endpoint: TLS verify-full, password, no GSS probing. */
export function libpqEnv(endpoint: Endpoint): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    PGHOST: endpoint.host,
    PGPORT: String(endpoint.port),
    PGUSER: endpoint.user,
    PGPASSWORD: endpoint.password,
    PGDATABASE: endpoint.database,
    PGSSLMODE: 'verify-full',
    PGSSLROOTCERT: endpoint.caFile,
    PGGSSENCMODE: 'disable',
    PGCONNECT_TIMEOUT: '10',
  };
}

export interface PgbenchOptions {
  readonly endpoint: Endpoint;
  readonly clients: number;
  readonly threads?: number;
  /** -T seconds (or `transactions` per client, -t). */
  readonly durationSeconds?: number;
  readonly transactions?: number;
  /** -C: a new connection for every transaction. */
  readonly connectPerTransaction: boolean;
  /** -b builtin (default select-only) or -f script files. */
  readonly builtin?: string;
  readonly scripts?: ReadonlyArray<string>;
  /** Per-transaction log prefix (-l --log-prefix); latencies are read back from it. */
  readonly logPrefix?: string;
  /** Kills pgbench after this long (default: duration + 60 s). */
  readonly killAfterMs?: number;
}

export interface PgbenchResult {
  readonly exitCode: number;
  readonly transactions: number;
  readonly failedTransactions: number;
  readonly abortedClients: number;
  /** pgbench's tps (with -C: including reconnection times). */
  readonly tps: number;
  readonly latencyAvgMs: number;
  /** -C: pgbench's average connection time. */
  readonly connectAvgMs?: number;
  /** Per-transaction latencies in ms from the -l logs (connection time excluded, as pgbench logs it). */
  readonly latenciesMs: number[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly stderrTail: string;
}

export function parsePgbenchOutput(stdout: string, stderr: string): Pick<PgbenchResult, 'transactions' | 'failedTransactions' | 'abortedClients' | 'tps' | 'latencyAvgMs' | 'connectAvgMs'> {
  const num = (re: RegExp): number | undefined => {
    const m = re.exec(stdout);
    return m ? Number(m[1]) : undefined;
  };
  const connectAvgMs = num(/average connection time = ([\d.]+) ms/);
  return {
    transactions: num(/number of transactions actually processed: (\d+)/) ?? 0,
    failedTransactions: num(/number of failed transactions: (\d+)/) ?? 0,
    abortedClients: (stderr.match(/client \d+ aborted/g) ?? []).length,
    tps: num(/^tps = ([\d.]+)/m) ?? 0,
    latencyAvgMs: num(/latency average = ([\d.]+) ms/) ?? Number.NaN,
    ...(connectAvgMs === undefined ? {} : { connectAvgMs }),
  };
}

/** Latencies (ms) of every successful transaction in pgbench's -l files for `prefix`. */
export function readTransactionLog(prefix: string): number[] {
  const dir = dirname(prefix);
  const stem = `${basename(prefix)}.`;
  const out: number[] = [];
  if (!existsSync(dir)) return out;
  for (const file of readdirSync(dir).filter((f) => f.startsWith(stem))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      // client_id transaction_no time script_no time_epoch time_us; time is "failed"/"skipped" otherwise.
      const time = line.split(' ')[2];
      if (time !== undefined && /^\d+$/.test(time)) out.push(Number(time) / 1000);
    }
  }
  return out;
}

export function runPgbench(o: PgbenchOptions): Promise<PgbenchResult> {
  const args = ['-n', '-c', String(o.clients), '-j', String(o.threads ?? 1)];
  if (o.durationSeconds !== undefined) args.push('-T', String(o.durationSeconds));
  else args.push('-t', String(o.transactions ?? 1000));
  if (o.connectPerTransaction) args.push('-C');
  if (o.scripts !== undefined && o.scripts.length > 0) for (const s of o.scripts) args.push('-f', s);
  else args.push('-b', o.builtin ?? 'select-only');
  if (o.logPrefix !== undefined) args.push('-l', `--log-prefix=${o.logPrefix}`);
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(pgbenchPath(), args, { env: libpqEnv(o.endpoint), cwd: o.logPrefix === undefined ? undefined : dirname(o.logPrefix), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.length > 4_000_000) stderr = stderr.slice(-2_000_000);
    });
    const limit = o.killAfterMs ?? ((o.durationSeconds ?? 120) + 60) * 1000;
    const timer = setTimeout(() => child.kill('SIGKILL'), limit);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const endedAt = Date.now();
      const parsed = parsePgbenchOutput(stdout, stderr);
      resolve({
        exitCode: code ?? -1,
        ...parsed,
        latenciesMs: o.logPrefix === undefined ? [] : readTransactionLog(o.logPrefix),
        startedAt,
        endedAt,
        stderrTail: stderr.split('\n').filter((l) => l.trim() !== '').slice(-5).join('\n'),
      });
    });
  });
}

/** pgbench -i on the writer (scale 1: 100,000 accounts), as the application user. */
export function initPgbench(writer: Endpoint, scale = 1): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(pgbenchPath(), ['-i', '-s', String(scale), '-q', '--no-vacuum'], { env: libpqEnv(writer), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`pgbench -i failed (${code}): ${stderr.slice(-500)}`))));
  });
}
