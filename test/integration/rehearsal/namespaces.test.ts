/**
 * A live rehearsal with network 'namespaces' (as root; skipped otherwise): the servers run in the data
 * namespace at 198.18.47.x, the root namespace still controls them through the management link, and a
 * consumer in the `app` VPC reaches the proxy's custom endpoints by their AWS-shaped names, with the TLS
 * check AWS allows there, and nothing behind them. `down` leaves no namespace.
 */
import { execFileSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consumerEnvironment, EndpointRole, type TlsConfig } from '../../../lambda/src/environment';
import { consumerVpcEndpoints, cpuBudgetsUnavailable, lambdaEnvironment, listNamespaces, readPoolers, REHEARSAL_CLUSTER, WorkDirLayout, rehearsalAwsNames, rehearsalCgroupName, rehearsalNetworkPlan, serverOsUser, simulateInvocations, type RehearsalStatus } from '../../../lib/rehearsal';
import { CONNECT_PROBE, liveUnavailable, runNode, tsNodeArgs } from './isolation';
import { startRehearsal, stopRehearsal } from './live';

interface ProbeOutcome {
  readonly stage: string;
  readonly code?: string;
  readonly inRecovery?: boolean;
  readonly server?: string;
}

const live = liveUnavailable === undefined ? describe : describe.skip;

live("a rehearsal with network 'namespaces'", () => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
  let status: RehearsalStatus;

  beforeAll(async () => {
    started = await startRehearsal('namespacesSuite', { network: 'namespaces', comparisonProxies: false, coresPerVcpu: cpuBudgetsUnavailable() === undefined ? 0.1 : 0 });
    status = await started.rehearsal.status();
  }, 120_000);

  afterAll(async () => {
    await stopRehearsal(started);
  }, 60_000);

  const consumer = () => consumerVpcEndpoints(started!.rehearsal.rehearsed);

  /** The consumers' own connection code, in the app namespace. */
  const probe = (host: string, role: EndpointRole, tls: TlsConfig): Promise<ProbeOutcome> => {
    const { args, env } = tsNodeArgs(join(__dirname, 'fixtures', 'consumer-tls-probe.ts'));
    const e = started!.rehearsal.endpoints.readOnly;
    const environment = consumerEnvironment({ host, port: e.port, database: e.database, user: e.user, endpointRole: role, auth: { kind: 'password', password: e.password }, tls, connectTimeoutMs: 3000, logLevel: 'SILENT' });
    return runNode<ProbeOutcome>({ namespace: consumer().namespace, args, env: { PATH: process.env.PATH ?? '', ...env, ...environment } }, 30_000);
  };

  test('GIVEN the rehearsal up WHEN its servers are inspected THEN they listen on the namespace addresses, inside the data namespace', () => {
    const plan = rehearsalNetworkPlan(started!.rehearsal.rehearsed);
    expect(started!.rehearsal.plan.writer).toBe('198.18.47.2');
    const dataNs = `net:[${statSync(`/run/netns/${plan.dataNamespace}`).ino}]`;
    const servers = status.processes.filter((p) => p.kind !== 'health-supervisor');
    // PgBouncer runs as groups of processes (two per target): the read/write group and one per replica.
    expect(servers.map((p) => p.name).sort()).toEqual(['pgbouncer-ro-1', 'pgbouncer-ro-2', 'pgbouncer-ro-3', 'pgbouncer-ro-4', 'pgbouncer-rw-1', 'pgbouncer-rw-2', 'replica1', 'replica2', 'writer']);
    for (const p of servers) expect([p.name, readlinkSync(`/proc/${p.pid}/ns/net`)]).toEqual([p.name, dataNs]);
    // Control from the root namespace, through the management link: status read every node.
    expect(status.nodes.map((n) => [n.name, n.role])).toEqual([['writer', 'writer'], ['replica1', 'replica'], ['replica2', 'replica']]);
    expect(status.replication).toHaveLength(2);
  });

  test("GIVEN the app VPC WHEN a consumer uses the read-only custom endpoint by name with verify-proxy-domain THEN it reads from a replica", async () => {
    const c = consumer();
    const outcome = await probe(c.readOnly.host, EndpointRole.READ_ONLY, { mode: 'verify-proxy-domain', caFile: started!.rehearsal.endpoints.readOnly.caFile, serverName: c.tlsServerName });
    expect(outcome.stage).toBe('connected');
    expect(outcome.inRecovery).toBe(true);
    expect(['198.18.47.3/32', '198.18.47.4/32']).toContain(outcome.server);
  }, 40_000);

  test('GIVEN the app VPC WHEN a consumer uses the read/write custom endpoint with verify-full THEN the name is rejected, as on AWS', async () => {
    const c = consumer();
    const outcome = await probe(c.readWrite.host, EndpointRole.READ_WRITE, { mode: 'verify-full', caFile: started!.rehearsal.endpoints.readWrite.caFile });
    expect(outcome).toMatchObject({ stage: 'connect', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  }, 40_000);

  test("GIVEN the real handlers run in the app VPC WHEN they use the custom endpoints by name THEN writes reach the writer and reads a replica", async () => {
    const c = consumer();
    const e = started!.rehearsal.endpoints;
    const tls = (caFile: string) => ({ tls: { mode: 'verify-proxy-domain' as const, caFile, serverName: c.tlsServerName } });
    const writes = await simulateInvocations({
      handler: 'write',
      env: lambdaEnvironment({ ...e.readWrite, host: c.readWrite.host }, EndpointRole.READ_WRITE, tls(e.readWrite.caFile)),
      containers: 2,
      invocationsPerContainer: 2,
      event: (container, i) => ({ id: 3700 + container * 10 + i, payload: { from: 'app' } }),
      namespace: c.namespace,
    });
    expect(writes.map((o) => o.error)).toEqual([undefined, undefined, undefined, undefined]);
    for (const o of writes) expect(o.response).toMatchObject({ inserted: true, served_by: { address: e.writer.host, in_recovery: false }, connection: { reused: !o.cold } });
    const reads = await simulateInvocations({
      handler: 'read',
      env: lambdaEnvironment({ ...e.readOnly, host: c.readOnly.host }, EndpointRole.READ_ONLY, tls(e.readOnly.caFile)),
      containers: 2,
      invocationsPerContainer: 1,
      event: () => ({ id: 3700 }),
      namespace: c.namespace,
    });
    for (const o of reads) expect(o.response).toMatchObject({ served_by: { in_recovery: true } });
  }, 60_000);

  test('GIVEN the app VPC WHEN a consumer tries the instances and the data VPC endpoints directly THEN the network is unreachable', async () => {
    const p = started!.rehearsal.plan;
    const port = started!.rehearsal.settings.port;
    const targets = [p.writer, p.replicas[0]!, p.readWrite, p.readOnly].map((a) => `${a}:${port}`);
    const results = await runNode<Record<string, string>>({ namespace: consumer().namespace, args: ['-e', CONNECT_PROBE, ...targets] });
    expect(Object.values(results)).toEqual(['ENETUNREACH', 'ENETUNREACH', 'ENETUNREACH', 'ENETUNREACH']);
  });

  test('GIVEN CPU budgets WHEN the pooler runs THEN every PgBouncer process shares the pooler host\'s budget, restarted ones too', async () => {
    const run = started!.rehearsal;
    const expected = `${Math.round(run.settings.poolerVcpus * run.settings.coresPerVcpu * 100_000)}`;
    const poolers = () => readPoolers(new WorkDirLayout(run.workDir));
    const budgetOf = (pid: number) => /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))?.[1];
    for (const p of poolers()) {
      expect([p.name, budgetOf(p.pid)]).toEqual([p.name, `/aurora-proxy-kit/${rehearsalCgroupName(run.settings)}/pgbouncer`]);
    }
    expect(readFileSync(`/sys/fs/cgroup/cpu${budgetOf(poolers()[0]!.pid)}/cpu.cfs_quota_us`, 'utf8').trim()).toBe(expected);
    // A crashed process comes back inside the budget (the supervisor restarts it).
    const victim = poolers().find((p) => p.name === 'pgbouncer-ro-1')!;
    process.kill(victim.pid, 'SIGKILL');
    const deadline = Date.now() + 15_000;
    let restarted = poolers().find((p) => p.name === victim.name)!;
    // Restarted once the wrapper has joined the budget and exec'd PgBouncer itself.
    const execd = (pid: number) => { try { return readlinkSync(`/proc/${pid}/exe`) === restarted.program; } catch { return false; } };
    while ((restarted.pid === victim.pid || !execd(restarted.pid)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      restarted = poolers().find((p) => p.name === victim.name)!;
    }
    expect(restarted.pid).not.toBe(victim.pid);
    expect(budgetOf(restarted.pid)).toBe(`/aurora-proxy-kit/${rehearsalCgroupName(run.settings)}/pgbouncer`);
  }, 30_000);

  test('GIVEN the cluster endpoint by name WHEN the writer fails over THEN every namespace resolves it to the promoted instance', async () => {
    const run = started!.rehearsal;
    const cluster = rehearsalAwsNames(run.rehearsed).clusterEndpoint(REHEARSAL_CLUSTER);
    const plan = rehearsalNetworkPlan(run.rehearsed);
    const resolve = (ns: string) => execFileSync('ip', ['netns', 'exec', ns, 'getent', 'hosts', cluster], { encoding: 'utf8' }).split(/\s+/)[0];
    for (const ns of plan.namespaces) expect([ns, resolve(ns)]).toEqual([ns, run.plan.writer]);
    const report = await run.failover();
    for (const ns of plan.namespaces) expect([ns, resolve(ns)]).toEqual([ns, report.newWriterAddress]);
  }, 60_000);

  test('GIVEN the rehearsal WHEN brought down THEN its namespaces are gone too', async () => {
    const namespaces = rehearsalNetworkPlan(started!.rehearsal.rehearsed).namespaces;
    await stopRehearsal(started);
    started = undefined;
    const left = await listNamespaces();
    expect(namespaces.filter((ns) => left.includes(ns))).toEqual([]);
  }, 60_000);
});

live('network namespaces without root', () => {
  test("GIVEN network 'namespaces' WHEN a non-root user resolves its settings THEN the rehearsal falls back to loopback and says why", () => {
    // As the postgres user (setpriv from root), the way a non-root user would run it. The code is bundled
    // into a directory that user can read: it may not be able to traverse the checkout (a 0700 clone).
    const user = serverOsUser()!;
    const dir = mkdtempSync(join(tmpdir(), 'fallback-'));
    chmodSync(dir, 0o755);
    const entry = join(dir, 'entry.ts');
    writeFileSync(entry, `
      import { rehearsalNetwork } from ${JSON.stringify(join(__dirname, '..', '..', '..', 'lib', 'rehearsal', 'network', 'rehearsal-network'))};
      import { resolveSettings } from ${JSON.stringify(join(__dirname, '..', '..', '..', 'lib', 'rehearsal', 'settings'))};
      const warnings: string[] = [];
      process.on('warning', (w) => warnings.push(w.name + ': ' + w.message));
      const network = rehearsalNetwork(resolveSettings({ network: 'namespaces' }, '/tmp')).available().name;
      setImmediate(() => console.log(JSON.stringify({ network, warnings })));`);
    const bundle = join(dir, 'fallback.js');
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', outfile: bundle, logLevel: 'silent' });
    chmodSync(bundle, 0o644);
    let out: string;
    try {
      out = execFileSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', process.execPath, '--no-warnings', bundle], { encoding: 'utf8', cwd: dir, env: { PATH: process.env.PATH ?? '' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(JSON.parse(out)).toEqual({
      network: 'loopback',
      warnings: [`RehearsalNetworkFallback: network 'namespaces' unavailable, running on loopback instead: network namespaces need root (ip netns, veth links, routes); running as uid ${user.uid}: run as root, or use the loopback network`],
    });
  }, 30_000);
});
