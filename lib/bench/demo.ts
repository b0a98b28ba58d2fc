/**
 * `make demo`'s live part: a rehearsal of what was synthesized (`cdk.out`, or a plan's JSON with --from)
 * on its own block, in namespaces shaped like its VPCs, the deployment's own consumers running the real
 * Lambda handlers from their namespaces, a short bench, the rehearsal down (always), and a summary.
 *
 *   npx aurora-proxy-kit demo [--from cdk.out] [--out DIR] [--scenario NAME ...]   (options: DEMO_COMMAND)
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lambdaEnvironment, Rehearsal, rehearsalFromDeployment, rehearsalProxyEndpoints, simulateInvocations, type InvocationOutcome } from '../rehearsal';
import { BENCH_BLOCKS } from './blocks';
import { parseOptions } from '../cli/spec';
import { BenchUsageError, DEMO_COMMAND, DEMO_SCENARIOS, scenarioList } from './commands';
import { runBench } from './runner';
import { round } from './stats';
import { EndpointRole } from '../../lambda/src/environment';

export { DEMO_COMMAND } from './commands';

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

/** The deployment's own consumers (network 'namespaces'): each from its VPC's namespace, with the template's environment. */
async function deployedConsumers(r: Rehearsal, lines: string[]): Promise<void> {
  const consumers = r.consumers();
  const event = (c: number, i: number): Record<string, unknown> => ({ id: 100 + c * 10 + i, payload: { demo: true } });
  // Writers first, so the readers find the rows.
  for (const c of [...consumers].sort((a, b) => (a.role === b.role ? 0 : a.role === 'READ_WRITE' ? -1 : 1))) {
    const outcomes = await simulateInvocations({ handler: c.handler, namespace: c.namespace, env: c.env, containers: 4, invocationsPerContainer: 5, event, ...(c.code !== undefined ? { code: c.code } : {}), ...(c.functionHandler !== undefined ? { functionHandler: c.functionHandler } : {}) });
    const code = c.code === undefined ? `the kit's ${c.handler} handler bundled from lambda/src` : `its shipped bundle ${c.code}`;
    lines.push(describe(`${c.name} (${c.role}, ${c.env.DB_USER}, ${c.env.DB_TLS}) from namespace ${c.namespace} via ${c.endpointHost}, ${code} under the Lambda runtime emulator on Node.js 24 (4 containers x 5)`, outcomes));
    if (c.role === 'READ_ONLY') {
      const found = outcomes.filter((o) => (o.response?.event as unknown) !== null && o.response?.event !== undefined).length;
      lines.push(`  reads that found the row a writer consumer wrote: ${found}/${outcomes.length}`);
    }
  }
}

/** Without namespaces (not root): the kit's handlers under the Lambda runtime emulator on loopback, through the two PgBouncer endpoints. */
async function loopbackConsumers(r: Rehearsal, lines: string[]): Promise<void> {
  const e = r.endpoints;
  const writes = await simulateInvocations({ handler: 'write', env: lambdaEnvironment(e.readWrite, EndpointRole.READ_WRITE), containers: 4, invocationsPerContainer: 5, event: (c, i) => ({ id: 100 + c * 10 + i, payload: { demo: true } }) });
  lines.push(describe('write handler via read/write endpoint (4 containers x 5)', writes));
  const reads = await simulateInvocations({ handler: 'read', env: lambdaEnvironment(e.readOnly, EndpointRole.READ_ONLY), containers: 4, invocationsPerContainer: 5, event: (c, i) => ({ id: 100 + c * 10 + i }) });
  lines.push(describe('read handler via read-only endpoint (4 containers x 5)', reads));
  const found = reads.filter((o) => (o.response?.event as unknown) !== null && o.response?.event !== undefined).length;
  lines.push(`reads that found the row written through the other endpoint: ${found}/${reads.length}`);
}

async function liveWorkload(from: string): Promise<string[]> {
  const workDir = mkdtempSync(join(tmpdir(), 'demo-'));
  chmodSync(workDir, 0o755);
  const lines: string[] = [];
  let r: Rehearsal | undefined;
  try {
    const t0 = Date.now();
    const { settings, deployment } = rehearsalFromDeployment(from);
    r = await Rehearsal.up({ settings: { ...settings, workDir, addressBlock: BENCH_BLOCKS.demo.block, maxConnections: 60, comparisonProxies: false }, deployment });
    const e = r.endpoints;
    const s = r.settings;
    lines.push(`rehearsal of ${from} up in ${round((Date.now() - t0) / 1000, 1)} s on network ${s.network}: writer ${e.writer.host}, replicas ${e.replicas.map((x) => x.host).join(', ')}; pool ${s.pool.maxConnectionsPercent}% of max_connections ${s.sizingMaxConnections}`);
    for (const d of deployment.notReproducible) lines.push(`not reproduced here: ${d.what.slice(0, d.what.includes(': ') ? d.what.indexOf(': ') : undefined)} -> ${d.localStandIn}`);
    // The deployment's consumers run where its names resolve: its VPCs' namespaces.
    if (r.network.connectionNames() !== null) {
      const fleet = r.deploymentFleet();
      if (fleet !== undefined) lines.push(`PgBouncer engine fleet: ${fleet.hosts.map((h) => `${h.name} ${h.host}`).join(', ')} booted from the deployment's user data; load balancer stand-in ${fleet.loadBalancer.address}`);
      // With a fleet, the default endpoint is the rehearsal's own stand-in, which no consumer of the deployment reaches.
      for (const endpoint of rehearsalProxyEndpoints(r.rehearsed).filter((x) => fleet === undefined || !x.isDefault)) lines.push(`endpoint ${endpoint.name} (${endpoint.role}${endpoint.isDefault ? ', default' : ''}) in VPC ${endpoint.vpc}: ${endpoint.host} -> ${endpoint.address}`);
      await deployedConsumers(r, lines);
    } else {
      await loopbackConsumers(r, lines);
    }
  } finally {
    if (r !== undefined) {
      const { stopped } = await r.down();
      lines.push(`rehearsal down: stopped ${stopped.length} processes by pid, nothing left running; namespaces removed`);
    }
    rmSync(workDir, { recursive: true, force: true });
  }
  return lines;
}

/** Runs the demo, printing through `say`; returns false when a bench scenario failed. */
export async function runDemo(argv: string[], say: (line?: string) => void): Promise<boolean> {
  const { values, repeated } = parseOptions(argv, { options: DEMO_COMMAND.options, commandName: 'demo' }, BenchUsageError);
  const outDir = values.get('--out') ?? 'bench-results/demo';
  // Both engines of the reference app when `make synth` made both (cdk.out/pgbouncer-engine: -c proxyEngine=pgbouncer).
  const froms = repeated.get('--from') ?? ['cdk.out', ...(existsSync(join('cdk.out', 'pgbouncer-engine', 'manifest.json')) ? [join('cdk.out', 'pgbouncer-engine')] : [])];
  const scenarios = scenarioList(repeated.get('--scenario')).scenarios ?? DEMO_SCENARIOS;
  const live: string[] = [];
  for (const from of froms) {
    say(`== live rehearsal of what was synthesized (${from}): the consumers' bundles under the Lambda runtime interface emulator on Node.js 24 through each endpoint, cold and warm`);
    const lines = await liveWorkload(from);
    for (const l of lines) say(`  ${l}`);
    live.push(...lines);
    say('');
  }
  say('== short bench (--quick)');
  const { result, files } = await runBench({ quick: true, outDir: resolve(outDir), scenarios, log: (l) => say(`  ${l}`) });
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
