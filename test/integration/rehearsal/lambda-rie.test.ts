/**
 * The consumers as deployed: `rehearse up --from` the reference app's cdk.out, then its Reader and Writer
 * functions' own bundles (the cdk.out assets) run under the Lambda Runtime Interface Emulator on Node.js 24
 * with aws-lambda-ric, in the consumer VPC's namespace (as root; skipped otherwise). A probe bundle of the
 * test's own shows what the runtime is (Node.js version, task root, namespace, module state kept between
 * warm invocations), that a thrown error comes back as Lambda returns it, and that no emulator or runtime
 * process outlives its container.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_NAME } from '../../../lambda/src/schema';
import { findLambdaRuntime, listNamespaces, query, rehearsalFromDeployment, rehearsalNetworkPlan, simulateInvocations, type InvocationOutcome } from '../../../lib/rehearsal';
import { liveUnavailable } from './isolation';
import { startRehearsal, stopRehearsal } from './live';
import { readDeploymentContext } from '../../../lib/reference-app/app-context';
import { ReferenceDeployment } from '../../../lib/reference-app/reference-deployment';
import { removeFixtures, synthesize } from '../../rehearsal/topology-fixtures';
import { BUNDLING } from '../../helpers/cdk';

const live = liveUnavailable === undefined ? describe : describe.skip;

/** Live processes (zombies excluded) running the emulator or Node.js 24. */
function runtimeProcesses(): number[] {
  const { emulator, node } = findLambdaRuntime();
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const exe = readlinkSync(`/proc/${p}/exe`);
        return (exe === emulator || exe === node) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${p}/stat`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

// A handler of the test's own: what the runtime gives it, a counter in module scope, and an error on demand.
const PROBE = `
const { readlinkSync } = require('node:fs');
let invocations = 0;
exports.handler = async (event) => {
  invocations += 1;
  if (event.fail) { const err = new Error('probe failed: ' + event.fail); err.name = 'ProbeError'; throw err; }
  return { node: process.version, taskRoot: process.env.LAMBDA_TASK_ROOT, handler: process.env._HANDLER, functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, net: readlinkSync('/proc/self/ns/net'), pid: process.pid, invocations };
};
`;

live('the reference app\'s consumers under the Lambda runtime interface emulator', () => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
  let cdkOut: string;
  let scratch: string;
  const before = new Set<number>();

  beforeAll(async () => {
    // GIVEN a rehearsal of the reference app's cdk.out, in namespaces of 198.18.55.0/24
    for (const pid of runtimeProcesses()) before.add(pid);
    scratch = mkdtempSync(join(tmpdir(), 'lambda-rie-test-'));
    // With its Lambda bundles built, as `cdk synth` builds them (the topology fixtures skip bundling).
    cdkOut = synthesize((app) => {
      const settings = readDeploymentContext(app);
      new ReferenceDeployment(app, settings.stackName, settings);
    }, BUNDLING);
    const { settings, deployment } = rehearsalFromDeployment(cdkOut);
    started = await startRehearsal('lambdaRieSuite', { ...settings, comparisonProxies: false, maxConnections: 40 }, deployment);
  }, 240_000);

  afterAll(async () => {
    const namespaces = started === undefined ? [] : rehearsalNetworkPlan(started.rehearsal.rehearsed).namespaces;
    await stopRehearsal(started);
    expect((await listNamespaces()).filter((n) => namespaces.includes(n))).toEqual([]);
    rmSync(scratch, { recursive: true, force: true });
    removeFixtures();
  }, 60_000);

  const consumer = (role: 'READ_ONLY' | 'READ_WRITE') => started!.rehearsal.consumers().find((c) => c.role === role)!;
  const errors = (outcomes: InvocationOutcome[]): string[] => outcomes.flatMap((o) => (o.error === undefined ? [] : [`${o.error.name}: ${o.error.message}`]));

  test('GIVEN the rehearsed deployment THEN each consumer names its own cdk.out asset and handler', () => {
    for (const role of ['READ_ONLY', 'READ_WRITE'] as const) {
      const c = consumer(role);
      expect(c.code).toMatch(/\/asset\.[0-9a-f]{64}$/);
      expect(c.code!.startsWith(cdkOut)).toBe(true);
      expect(existsSync(join(c.code!, 'index.js'))).toBe(true);
      expect(c.functionHandler).toBe('index.handler');
    }
    expect(consumer('READ_ONLY').code).not.toBe(consumer('READ_WRITE').code);
  });

  test('WHEN the Writer then the Reader bundle are invoked THEN each container\'s first invocation is cold, the rest warm on its connection, and the rows are in the database', async () => {
    const writer = consumer('READ_WRITE');
    const reader = consumer('READ_ONLY');
    const run = (c: typeof writer, event: (c: number, i: number) => unknown) =>
      simulateInvocations({ handler: c.handler, namespace: c.namespace, env: c.env, code: c.code!, functionHandler: c.functionHandler!, containers: 2, invocationsPerContainer: 3, event });
    const writes = await run(writer, (c, i) => ({ id: 5500 + c * 10 + i, payload: { from: 'rie' } }));
    expect(errors(writes)).toEqual([]);
    expect(writes.map((o) => [o.container, o.invocation, o.cold, o.response?.inserted, (o.response?.connection as { reused?: boolean } | undefined)?.reused])).toEqual([
      [0, 0, true, true, false],
      [0, 1, false, true, true],
      [0, 2, false, true, true],
      [1, 0, true, true, false],
      [1, 1, false, true, true],
      [1, 2, false, true, true],
    ]);
    const rows = await query<{ id: number }>({ ...started!.rehearsal.adminEndpoint('writer'), database: writer.env.DB_NAME! }, `SELECT id FROM ${TABLE_NAME} WHERE id BETWEEN 5500 AND 5599 ORDER BY id`);
    expect(rows.map((r) => Number(r.id))).toEqual([5500, 5501, 5502, 5510, 5511, 5512]);

    const reads = await run(reader, (c, i) => ({ id: 5500 + c * 10 + i }));
    expect(errors(reads)).toEqual([]);
    expect(reads.map((o) => (o.response?.event as { id?: unknown } | null | undefined)?.id).map(Number)).toEqual([5500, 5501, 5502, 5510, 5511, 5512]);
    expect(reads.map((o) => (o.response?.connection as { reused?: boolean } | undefined)?.reused)).toEqual([false, true, true, false, true, true]);
    // A cold start boots Node.js and opens a TLS connection: slower than a warm invocation on an open one.
    const mean = (xs: InvocationOutcome[]): number => xs.reduce((s, o) => s + o.elapsedMs, 0) / xs.length;
    expect(mean(reads.filter((o) => o.cold))).toBeGreaterThan(mean(reads.filter((o) => !o.cold)));
    expect(runtimeProcesses().filter((p) => !before.has(p))).toEqual([]);
  }, 120_000);

  test('WHEN a bundle is run from its zip in the consumer namespace THEN Node.js 24 runs it from the task root, keeps module state while warm, and a thrown error comes back as Lambda returns it', async () => {
    const bundle = join(scratch, 'probe');
    execFileSync('mkdir', ['-p', bundle]);
    writeFileSync(join(bundle, 'index.js'), PROBE);
    const zip = join(scratch, 'probe.zip');
    execFileSync('zip', ['-q', '-j', zip, join(bundle, 'index.js')]);
    const writer = consumer('READ_WRITE');
    const outcomes = await simulateInvocations({
      handler: 'write',
      namespace: writer.namespace,
      env: { AWS_LAMBDA_FUNCTION_NAME: 'probe' },
      code: zip,
      containers: 2,
      invocationsPerContainer: 3,
      event: (c, i) => (c === 1 && i === 1 ? { fail: 'on purpose' } : {}),
    });
    const ok = outcomes.filter((o) => o.error === undefined);
    expect(ok.map((o) => o.response?.node)).toEqual(ok.map(() => expect.stringMatching(/^v24\./)));
    expect(new Set(ok.map((o) => o.response?.taskRoot)).size).toBe(1);
    expect(ok[0]!.response?.taskRoot).not.toBe(bundle);
    expect(ok.map((o) => o.response?.handler)).toEqual(ok.map(() => 'index.handler'));
    expect(ok.map((o) => o.response?.functionName)).toEqual(ok.map(() => 'probe'));
    // The function runs in the consumer VPC's namespace, not this process's.
    const namespaceInode = `net:[${statSync(`/var/run/netns/${writer.namespace}`).ino}]`;
    expect(ok.map((o) => o.response?.net)).toEqual(ok.map(() => namespaceInode));
    expect(outcomes.map((o) => [o.container, o.cold, o.response?.invocations ?? o.error?.name])).toEqual([
      [0, true, 1],
      [0, false, 2],
      [0, false, 3],
      [1, true, 1],
      [1, false, 'ProbeError'],
      [1, false, 3],
    ]);
    expect(outcomes[4]!.error).toEqual({ name: 'ProbeError', message: 'probe failed: on purpose' });
    // Each container was one runtime process, and none is left.
    expect(new Set(ok.map((o) => o.response?.pid)).size).toBe(2);
    expect(runtimeProcesses().filter((p) => !before.has(p))).toEqual([]);
  }, 60_000);

  test('WHEN a consumer\'s bundle is missing THEN the harness names it and how to make it, and starts nothing', async () => {
    const writer = consumer('READ_WRITE');
    const gone = join(cdkOut, 'asset.0000000000000000000000000000000000000000000000000000000000000000');
    await expect(simulateInvocations({ handler: 'write', namespace: writer.namespace, env: writer.env, code: gone, containers: 1, invocationsPerContainer: 1, event: () => ({}) })).rejects.toThrow(
      new RegExp(`${gone}.*does not exist.*cdk synth.*make lambda-zip`),
    );
    expect(runtimeProcesses().filter((p) => !before.has(p))).toEqual([]);
  });
});
