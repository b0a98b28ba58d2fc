/**
 * A closed-loop read/write load in worker threads (node-postgres over TLS): every virtual client
 * does `readShare` point reads and the rest single-row updates on pgbench_accounts, sending reads to
 * `read` and writes to `write` (the same target: one connection; different targets: two).
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Endpoint } from '../rehearsal';

export interface MixedLoadOptions {
  readonly read: Endpoint;
  readonly write: Endpoint;
  readonly clients: number;
  readonly workers: number;
  readonly durationMs: number;
  readonly readShare: number;
  readonly accounts: number;
}

export interface MixedLoadResult {
  readonly reads: number;
  readonly writes: number;
  readonly errors: number;
  readonly seconds: number;
  readonly opsPerSecond: number;
  readonly errorSamples: ReadonlyArray<string>;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Client } = require(workerData.pgPath);
const w = workerData;
const mk = (t) => { const c = new Client({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database, ssl: { ca: w.ca, rejectUnauthorized: true }, connectionTimeoutMillis: 20000 }); c.on('error', () => {}); return c; };
(async () => {
  const same = w.read.host === w.write.host && w.read.port === w.write.port;
  const vcs = [];
  for (let i = 0; i < w.clients; i++) {
    const wc = mk(w.write); await wc.connect();
    let rc = wc; if (!same) { rc = mk(w.read); await rc.connect(); }
    vcs.push({ rc, wc });
  }
  parentPort.postMessage({ ready: true });
  const go = await new Promise((resolve) => parentPort.once('message', resolve));
  const end = go.end;
  let reads = 0, writes = 0, errors = 0; const samples = [];
  await Promise.all(vcs.map(async ({ rc, wc }) => {
    while (Date.now() < end) {
      const aid = 1 + Math.floor(Math.random() * w.accounts);
      try {
        if (Math.random() < w.readShare) { await rc.query('SELECT abalance FROM pgbench_accounts WHERE aid = $1', [aid]); reads++; }
        else { await wc.query('UPDATE pgbench_accounts SET abalance = abalance + $2 WHERE aid = $1', [aid, 1 + Math.floor(Math.random() * 100)]); writes++; }
      } catch (e) { errors++; if (samples.length < 3) samples.push(String(e && e.message)); }
    }
  }));
  await Promise.all(vcs.flatMap(({ rc, wc }) => (rc === wc ? [wc.end()] : [rc.end(), wc.end()]).map((p) => p.catch(() => {}))));
  parentPort.postMessage({ reads, writes, errors, samples });
})().catch((e) => parentPort.postMessage({ fatal: String(e && e.stack) }));
`;

export async function runMixedLoad(o: MixedLoadOptions): Promise<MixedLoadResult> {
  const ca = readFileSync(o.read.caFile, 'utf8');
  const per = Array.from({ length: o.workers }, (_, i) => Math.floor(o.clients / o.workers) + (i < o.clients % o.workers ? 1 : 0));
  const workers = per.map((clients) => new Worker(WORKER, { eval: true, workerData: { pgPath: require.resolve('pg'), ca, clients, read: { ...o.read }, write: { ...o.write }, readShare: o.readShare, accounts: o.accounts } }));
  const next = (w: Worker): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      w.once('message', (m: Record<string, unknown>) => (typeof m.fatal === 'string' ? reject(new Error(m.fatal)) : resolve(m)));
      w.once('error', reject);
    });
  try {
    await Promise.all(workers.map(next));
    const start = Date.now();
    const results = workers.map(next);
    for (const w of workers) w.postMessage({ end: start + o.durationMs });
    const done = await Promise.all(results);
    const seconds = (Date.now() - start) / 1000;
    const sum = (k: string): number => done.reduce((s, d) => s + Number(d[k] ?? 0), 0);
    return {
      reads: sum('reads'),
      writes: sum('writes'),
      errors: sum('errors'),
      seconds,
      opsPerSecond: (sum('reads') + sum('writes')) / seconds,
      errorSamples: done.flatMap((d) => (d.samples as string[] | undefined) ?? []).slice(0, 3),
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
