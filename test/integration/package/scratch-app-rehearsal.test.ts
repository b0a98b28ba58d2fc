/**
 * A user's own app, from the npm tarball, rehearsed (slow and live: packs, installs aws-cdk-lib into a
 * temporary app, then, as root, rehearses its cdk.out in namespaces; the PgBouncer engine boots its hosts).
 * The app is the README's "Stacks and apps" example as a user copies it: the network, the data and the
 * consumers in three stacks, the engine chosen by context. It is compiled against the installed package and
 * synthesized as the CDK CLI runs it, with either engine; each cdk.out is rehearsed with the repository's
 * command line (`rehearse up --from`), whose consumers run the functions' own code from that cdk.out (the
 * package's pre-bundled handlers), and `rehearse down` leaves nothing. The same app with the Secrets Manager
 * route left to the user (apiRoutes BRING_YOUR_OWN) and none given fails at synth, naming it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { budgetLeftovers, isAlive, listNamespaces, Rehearsal, rehearsalCgroupName, rehearsalNetworkPlan, simulateInvocations, type InvocationOutcome } from '../../../lib/rehearsal';
import { readmeStacksExample } from '../../helpers/readme';
import { SUITE_BLOCKS, type SuiteBlockUser } from '../../support/loopback-blocks';
import { liveUnavailable } from '../rehearsal/isolation';
import { CDK_CONTEXT, ROOT, ScratchApp, packTarball } from './scratch-app';
import { CloudAssemblyIndex } from '../../../lib/cloud-assembly';

const ENGINES = [
  { engine: 'RDS Proxy', context: {}, block: 'scratchAppSuite' as SuiteBlockUser },
  { engine: 'PgBouncer', context: { engine: 'pgbouncer' }, block: 'scratchAppFleetSuite' as SuiteBlockUser },
] as const;

/**
 * The same app, its Secrets Manager route left to the user and none given: the role bootstrap and the
 * consumers take `apiRoutes: ApiRoutes.BRING_YOUR_OWN` (the prop that turns the kit's own endpoint off).
 */
function withoutSecretsManagerRoute(example: string): string {
  let changed = example.replace(/^(import \{\n)/m, '$1  ApiRoutes,\n');
  changed = changed.replace(/(new DatabaseRoleBootstrap\(data, 'DatabaseRoles', \{\n)/, '$1  apiRoutes: ApiRoutes.BRING_YOUR_OWN,\n');
  changed = changed.replace(/(new LambdaConsumer\(consumers, '(?:Reader|Writer)', \{ )/g, '$1apiRoutes: ApiRoutes.BRING_YOUR_OWN, ');
  if ((changed.match(/ApiRoutes\.BRING_YOUR_OWN/g) ?? []).length !== 3) throw new Error('the README\'s three-stack example no longer has the role bootstrap and two consumers this test turns the route off on: update it');
  return changed;
}

/** The repository's command line, as `npx aurora-proxy-kit` runs it in a checkout. */
function rehearse(args: ReadonlyArray<string>, timeoutMs: number): string {
  return execFileSync(process.execPath, [path.join(ROOT, 'bin', 'aurora-proxy-kit.js'), 'rehearse', ...args], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 * 1024 * 1024 });
}

function summary(outcomes: InvocationOutcome[]): { ok: number; errors: string[] } {
  return { ok: outcomes.filter((o) => o.error === undefined).length, errors: outcomes.flatMap((o) => (o.error === undefined ? [] : [`${o.error.name}: ${o.error.message}`])) };
}

const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aurora-proxy-kit-pack-'));
const app = new ScratchApp();
const example = readmeStacksExample();
let compileErrors: string[] = [];
const synths = new Map<string, ReturnType<ScratchApp['run']>>();
const refused = new Map<string, ReturnType<ScratchApp['run']>>();

beforeAll(() => {
  // GIVEN the packed tarball, installed with its peers at the versions the repository locks, in an app outside the repository
  const { tarball } = packTarball(packDir);
  app.installKit(tarball, ['aws-cdk-lib', 'constructs', '@types/node']);
  // WHEN the README's app is compiled there and run as `cdk synth [-c engine=pgbouncer]` would, with and without the route
  compileErrors = app.compile('app', example);
  app.transpile('no-route', withoutSecretsManagerRoute(example));
  for (const { engine, context } of ENGINES) {
    synths.set(engine, app.run('app', { ...CDK_CONTEXT, ...context }, `cdk.out.${engine.replace(/ /g, '-')}`));
    refused.set(engine, app.run('no-route', { ...CDK_CONTEXT, ...context }, `cdk.out.no-route.${engine.replace(/ /g, '-')}`));
  }
}, 600_000);

afterAll(() => {
  // KEEP_SCRATCH=1 leaves the app (and its cdk.out directories) in place to look at.
  if (process.env.KEEP_SCRATCH) return;
  app.dispose();
  fs.rmSync(packDir, { recursive: true, force: true });
});

describe('the README\'s three-stack app, from the npm tarball', () => {
  test('type-checks against the installed package', () => {
    expect(compileErrors).toEqual([]);
  });

  test.each(ENGINES)('$engine: synthesizes three stacks, the consumers depending on the data stack, which depends on the network stack', ({ engine }) => {
    // THEN
    const run = synths.get(engine)!;
    expect([run.status, run.stderr]).toEqual([0, expect.any(String)]);
    const assembly = CloudAssemblyIndex.read(run.outdir);
    const dependsOn = (name: string) => [...assembly.stack(name).dependencies].sort();
    expect(assembly.stacks.map((s) => s.name).sort()).toEqual(['Consumers', 'Data', 'Network']);
    expect([dependsOn('Network'), dependsOn('Data'), dependsOn('Consumers')]).toEqual([[], ['Network'], ['Data', 'Network']]);
  });

  test.each(ENGINES)('$engine: without the Secrets Manager route, synth fails naming the route and the construct that needs it', ({ engine }) => {
    const run = refused.get(engine)!;
    expect(run.status).not.toBe(0);
    // The role bootstrap reads the master secret from the data VPC on both engines (the PgBouncer hosts' own
    // endpoint there admits the hosts only); RDS Proxy's consumers log in with IAM tokens and call no AWS API,
    // the PgBouncer engine's read their password secrets from the application's VPC, which has no egress.
    const bootstrap = ['Data/DatabaseRoles', 'the role bootstrap function'];
    const consumer = 'the consumer function (it reads its password secret)';
    const expected = engine === 'RDS Proxy' ? [bootstrap] : [bootstrap, ['Consumers/Reader', consumer], ['Consumers/Writer', consumer]];
    for (const [construct, what] of expected) {
      expect(run.stderr).toContain(
        `[${construct}] no route from ${what} to Secrets Manager (secretsmanager): the subnets have no egress (vpcSubnets) and vpcEndpoints names no VPC endpoint of it; pass the VPC's endpoints in vpcEndpoints (secretsmanager), or subnets with a route to a NAT gateway or an internet gateway; or leave apiRoutes at ApiRoutes.CREATE (the default) so the construct makes them`,
      );
    }
    expect(run.stderr.match(/\] no route from /g)?.length).toBe(expected.length);
  });
});

const live = liveUnavailable === undefined ? describe : describe.skip;

// One engine after the other, each on its own block.
live.each(ENGINES)('the README\'s three-stack app with $engine, rehearsed from its cdk.out', ({ engine, block }) => {
  const addressBlock = SUITE_BLOCKS[block].block;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rehearsal-test-'));
  // The servers run as postgres and must traverse it.
  fs.chmodSync(workDir, 0o755);
  let rehearsal: Rehearsal | undefined;
  let pids: number[] = [];
  let containers: number[] = [];
  let upOutput = '';
  let upSeconds = 0;

  beforeAll(() => {
    // GIVEN the app's cdk.out, as `npx cdk synth` left it in the user's directory
    const run = synths.get(engine)!;
    if (run.status !== 0) throw new Error(`the app did not synthesize: ${run.stderr}`);
    // WHEN the repository's command rehearses it (the servers, hosts and budgets outlive the command, as they do for a user)
    const started = Date.now();
    upOutput = rehearse(['up', '--from', run.outdir, '--address-block', addressBlock, '--work-dir', workDir, '--no-comparison-proxies', '--max-connections', '60'], 900_000);
    upSeconds = (Date.now() - started) / 1000;
    rehearsal = Rehearsal.attach(workDir);
  }, 960_000);

  afterAll(async () => {
    const namespaces = rehearsal === undefined ? [] : rehearsalNetworkPlan(rehearsal.rehearsed).namespaces;
    const hostNamespace = new RegExp(`^apk${addressBlock.split('.')[2]}-host\\d+$`);
    let down = '';
    try {
      if (rehearsal !== undefined) pids = [...pids, ...(await rehearsal.status()).processes.map((p) => p.pid)];
    } finally {
      down = rehearse(['down', '--work-dir', workDir], 180_000);
    }
    try {
      // THEN down stopped everything it started: no process, host, namespace, CPU budget or mount is left
      expect(down).not.toMatch(/nothing to stop/);
      expect(pids.filter((pid) => isAlive(pid))).toEqual([]);
      expect(containers.filter((pid) => isAlive(pid))).toEqual([]);
      expect((await listNamespaces()).filter((n) => namespaces.includes(n) || hostNamespace.test(n))).toEqual([]);
      expect(budgetLeftovers(rehearsalCgroupName({ addressBlock }))).toEqual([]);
      expect(fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(workDir))).toEqual([]);
    } finally {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
  }, 240_000);

  test('GIVEN the rehearsal WHEN its status is read THEN it rehearses the three stacks\' deployment', async () => {
    const status = await rehearsal!.status();
    pids = status.processes.map((p) => p.pid);
    containers = rehearsal!.deploymentFleet()?.hosts.map((h) => h.booted.container.pid) ?? [];
    expect(upOutput).toMatch(/^rehearsal up in [\d.]+ s/);
    expect(upOutput).toMatch(/^rehearsing .*; 2 consumers; region /m);
    expect(rehearsal!.rehearsed.deployment?.from).toBe(synths.get(engine)!.outdir);
    if (engine === 'PgBouncer') expect(status.fleet?.hosts.map((h) => h.alive)).toEqual([true, true]);
    else expect(status.fleet).toBeUndefined();
    // How long `up --from` took, for the suite's time budget.
    process.stdout.write(`${engine}: rehearse up --from took ${upSeconds.toFixed(1)} s\n`);
  });

  test('GIVEN the rehearsal WHEN the app\'s consumers run their deployed code from its cdk.out THEN writes and reads succeed as their own users', async () => {
    const consumers = rehearsal!.consumers();
    expect(consumers.map((c) => [c.role, c.env.DB_USER])).toEqual([
      ['READ_ONLY', 'app_reader'],
      ['READ_WRITE', 'app_writer'],
    ]);
    const outdir = synths.get(engine)!.outdir;
    for (const c of consumers) {
      // the package's pre-bundled handler, staged by the user's synth
      expect(c.code === undefined ? undefined : path.dirname(path.relative(outdir, c.code))).toBe('.');
      expect(c.functionHandler).toBe('index.handler');
    }
    const writer = consumers.find((c) => c.role === 'READ_WRITE')!;
    const reader = consumers.find((c) => c.role === 'READ_ONLY')!;
    const run = (c: typeof writer, base: number) =>
      simulateInvocations({
        handler: c.handler,
        namespace: c.namespace,
        env: c.env,
        code: c.code,
        functionHandler: c.functionHandler,
        containers: 2,
        invocationsPerContainer: 2,
        event: (container, i) => ({ id: base + container * 10 + i, payload: { from: 'scratch-app' } }),
      });
    const writes = await run(writer, 5600);
    expect(summary(writes)).toEqual({ ok: 4, errors: [] });
    const reads = await run(reader, 5600);
    expect(summary(reads)).toEqual({ ok: 4, errors: [] });
    // the reads were served by the replicas
    expect(reads.map((o) => (o.response as { served_by?: { in_recovery?: boolean } } | undefined)?.served_by?.in_recovery)).toEqual(Array(4).fill(true));
  }, 240_000);
});
