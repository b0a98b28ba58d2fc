/**
 * `make demo`'s live part: the rehearsal up on its own loopback block, the real Lambda handlers through
 * both endpoints, a short bench, the rehearsal down (always), and a readable summary.
 *
 *   demo [--out DIR] [--scenario NAME ...]
 *
 * Default bench: --quick read_only_endpoint and connect_overhead, written to DIR (bench-results/demo).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lambdaEnvironment, LOOPBACK_BLOCKS, Rehearsal, simulateInvocations, type InvocationOutcome } from '../rehearsal';
import { runBench } from './runner';
import { round } from './stats';
import { SCENARIO_NAMES, type ScenarioName } from './types';

function describe(label: string, outcomes: InvocationOutcome[]): string {
  const ok = outcomes.filter((o) => o.error === undefined);
  const servedBy = new Map<string, number>();
  for (const o of ok) {
    const addr = String((o.response?.served_by as { address?: string } | undefined)?.address ?? '?');
    servedBy.set(addr, (servedBy.get(addr) ?? 0) + 1);
  }
  const avg = (xs: InvocationOutcome[]): string => (xs.length === 0 ? '-' : `${round(xs.reduce((s, o) => s + o.elapsedMs, 0) / xs.length, 1)} ms`);
  return `${label}: ${ok.length}/${outcomes.length} ok, served by ${[...servedBy].map(([a, n]) => `${a} x${n}`).join(', ')}; cold ${avg(ok.filter((o) => o.cold))}, warm ${avg(ok.filter((o) => !o.cold))}${ok.length < outcomes.length ? `; first error: ${outcomes.find((o) => o.error)?.error?.message}` : ''}`;
}

async function liveWorkload(): Promise<string[]> {
  const workDir = mkdtempSync(join(tmpdir(), 'demo-'));
  chmodSync(workDir, 0o755);
  const lines: string[] = [];
  let r: Rehearsal | undefined;
  try {
    const t0 = Date.now();
    r = await Rehearsal.up({ workDir, addressBlock: LOOPBACK_BLOCKS.demo.block, replicas: 2, maxConnections: 60, pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 30 } });
    const e = r.endpoints;
    lines.push(`rehearsal up in ${round((Date.now() - t0) / 1000, 1)} s: writer ${e.writer.host}, replicas ${e.replicas.map((x) => x.host).join(', ')}; read/write endpoint ${e.readWrite.host}:${e.readWrite.port}, read-only endpoint ${e.readOnly.host}:${e.readOnly.port} (PgBouncer, TLS)`);
    const writes = await simulateInvocations({ handler: 'write', env: lambdaEnvironment(e.readWrite, 'READ_WRITE'), containers: 4, invocationsPerContainer: 5, event: (c, i) => ({ id: 100 + c * 10 + i, payload: { demo: true } }) });
    lines.push(describe('write handler via read/write endpoint (4 containers x 5)', writes));
    const reads = await simulateInvocations({ handler: 'read', env: lambdaEnvironment(e.readOnly, 'READ_ONLY'), containers: 4, invocationsPerContainer: 5, event: (c, i) => ({ id: 100 + c * 10 + i }) });
    lines.push(describe('read handler via read-only endpoint (4 containers x 5)', reads));
    const found = reads.filter((o) => (o.response?.event as unknown) !== null && o.response?.event !== undefined).length;
    lines.push(`reads that found the row written through the other endpoint: ${found}/${reads.length}`);
  } finally {
    if (r !== undefined) {
      const { stopped } = await r.down();
      lines.push(`rehearsal down: stopped ${stopped.length} processes by pid, nothing left running`);
    }
    rmSync(workDir, { recursive: true, force: true });
  }
  return lines;
}

/** Runs the demo, printing through `say`; returns false when a bench scenario failed. */
export async function runDemo(argv: string[], say: (line?: string) => void): Promise<boolean> {
  let outDir = 'bench-results/demo';
  const scenarios: ScenarioName[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') outDir = argv[++i] ?? outDir;
    else if (argv[i] === '--scenario' && (SCENARIO_NAMES as readonly string[]).includes(argv[i + 1] ?? '')) scenarios.push(argv[++i] as ScenarioName);
    else throw new Error(`unknown option ${argv[i]}: use --out DIR, --scenario NAME`);
  }
  say('== live rehearsal: the real Lambda handlers through both endpoints');
  const live = await liveWorkload();
  for (const l of live) say(`  ${l}`);
  say('');
  say('== short bench (--quick)');
  const { result, files } = await runBench({ quick: true, outDir: resolve(outDir), scenarios: scenarios.length > 0 ? scenarios : ['read_only_endpoint', 'connect_overhead'], log: (l) => say(`  ${l}`) });
  say('');
  say('== summary');
  for (const l of live) say(`  ${l}`);
  for (const s of Object.values(result.scenarios)) {
    if (s === undefined) continue;
    if (s.error !== undefined) say(`  ${s.name}: FAILED: ${s.error}`);
    for (const c of s.checks) say(`  ${s.name}: ${c.metric}: ${c.baselineLabel} ${c.baseline} vs ${c.oursLabel} ${c.ours} ${c.unit} -> ${c.reads} (target ${c.target}: ${c.met ? 'met' : 'missed'}; seed: ${c.seed})`);
  }
  say(`  bench ${result.summary.met}/${result.summary.targets} targets met in ${result.durationSeconds} s; reports: ${files.join(', ')}`);
  return result.summary.failedScenarios.length === 0;
}
