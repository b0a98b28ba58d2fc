/**
 * `rehearse up --from`: a rehearsal of what the reference app (cdk.out) or the complete example (a
 * plan's JSON) would deploy, in namespaces shaped like its VPCs (as root; skipped otherwise). The
 * consumers run in their consumer VPC's namespace with the environment the template gives them (their
 * own users, verify-proxy-domain against the proxy's default endpoint), logged in as the roles the
 * deployed role bootstrap's own code made; `down` leaves no namespace.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { budgetLeftovers, formatNotReproduced, isAlive, readProcesses, Rehearsal, WorkDirLayout, deploymentFromTopology, listNamespaces, rehearsalCgroupName, loadTopology, rehearsalFromDeployment, rehearsalNetworkPlan, simulateInvocations, type InvocationOutcome, query } from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { liveUnavailable } from './isolation';
import { startRehearsal, stopRehearsal } from './live';
import { COMPLETE_EXAMPLE, COMPLETE_PGBOUNCER_EXAMPLE, planFile, planWithModules, removeFixtures, synthesizeReferenceApp } from '../../rehearsal/topology-fixtures';

afterAll(() => removeFixtures());

describe('the deployment a rehearsal derives from cdk.out', () => {
  test('GIVEN the reference app WHEN reduced to a rehearsed deployment THEN its endpoints sit in the consumer VPC and its consumers keep their users and TLS check', () => {
    const { dir } = synthesizeReferenceApp();
    const d = deploymentFromTopology(loadTopology(dir), dir);
    expect(d.consumerVpcs.map((v) => v.key)).toEqual(['consumer']);
    expect(d.endpoints.map((e) => [e.role, e.isDefault, e.vpc])).toEqual([
      ['READ_WRITE', true, 'data'],
      ['READ_ONLY', false, 'consumer'],
      ['READ_WRITE', false, 'consumer'],
    ]);
    expect(d.consumers.map((c) => [c.role, c.user, c.tlsMode, c.tlsServerEndpoint, c.vpc])).toEqual([
      ['READ_ONLY', 'app_reader', 'verify-proxy-domain', d.endpoints[0]!.name, 'consumer'],
      ['READ_WRITE', 'app_writer', 'verify-proxy-domain', d.endpoints[0]!.name, 'consumer'],
    ]);
    expect(d.readerClasses).toEqual(['db.r6gd.xlarge', 'db.r6gd.xlarge']);
  });

  test('GIVEN the reference app WHEN up --from reports what it rehearses THEN each AWS service it cannot run is listed with its stand-in', () => {
    const { dir } = synthesizeReferenceApp();
    const text = formatNotReproduced(deploymentFromTopology(loadTopology(dir), dir));
    expect(text).toMatch(/^rehearsing .*: proxy [a-z0-9-]+ with endpoints .*READ_ONLY.*; 2 consumers; region us-east-1$/m);
    for (const service of ['IAM authentication tokens', 'Secrets Manager', 'KMS', 'CloudWatch', 'X-Ray']) expect(text).toContain(service);
    expect(text.match(/stand-in: /g)?.length).toBeGreaterThanOrEqual(5);
  });

  test('GIVEN more read-only endpoints WHEN reduced THEN every endpoint gets an address in its VPC', () => {
    const { dir } = synthesizeReferenceApp({ readOnlyEndpoints: '3' });
    const plan = rehearsalNetworkPlan({ addressBlock: '127.0.48', deployment: rehearsalFromDeployment(dir).deployment });
    expect(plan.consumers).toHaveLength(1);
    expect(plan.consumers[0]!.endpoints).toHaveLength(4);
    expect(new Set(plan.consumers[0]!.endpoints.map((e) => e.address)).size).toBe(4);
  });
});

const live = liveUnavailable === undefined ? describe : describe.skip;

function summary(outcomes: InvocationOutcome[]): { ok: number; errors: string[] } {
  return { ok: outcomes.filter((o) => o.error === undefined).length, errors: outcomes.flatMap((o) => (o.error === undefined ? [] : [`${o.error.name}: ${o.error.message}`])) };
}

live.each([
  ['cdk.out of the reference app', (): string => synthesizeReferenceApp().dir],
  ['the plan of examples/complete', (): string => planFile(COMPLETE_EXAMPLE).file],
])('rehearse up --from %s', (_label, source) => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;

  beforeAll(async () => {
    const { settings, deployment } = rehearsalFromDeployment(source());
    started = await startRehearsal('fromDeploymentSuite', { ...settings, comparisonProxies: false, maxConnections: 40 }, deployment);
  }, 180_000);

  afterAll(async () => {
    const namespaces = started === undefined ? [] : rehearsalNetworkPlan(started.rehearsal.rehearsed).namespaces;
    const cgroup = started === undefined ? undefined : rehearsalCgroupName(started.rehearsal.settings);
    await stopRehearsal(started);
    expect((await listNamespaces()).filter((n) => namespaces.includes(n))).toEqual([]);
    if (cgroup !== undefined) expect(budgetLeftovers(cgroup)).toEqual([]);
  }, 60_000);

  test('GIVEN the rehearsal WHEN its consumers run the real handlers from their namespace THEN writes and reads succeed as their own users', async () => {
    const consumers = started!.rehearsal.consumers();
    expect(consumers.map((c) => [c.role, c.env.DB_USER, c.env.DB_TLS])).toEqual([
      ['READ_ONLY', 'app_reader', 'verify-proxy-domain'],
      ['READ_WRITE', 'app_writer', 'verify-proxy-domain'],
    ]);
    const writer = consumers.find((c) => c.role === 'READ_WRITE')!;
    const reader = consumers.find((c) => c.role === 'READ_ONLY')!;
    expect(writer.endpointHost).toMatch(/\.endpoint\.proxy-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$/);
    const writes = await simulateInvocations({ handler: 'write', namespace: writer.namespace, env: writer.env, containers: 2, invocationsPerContainer: 3, event: (c, i) => ({ id: 4800 + c * 10 + i, payload: { from: 'deployment' } }) });
    expect(summary(writes)).toEqual({ ok: 6, errors: [] });
    const reads = await simulateInvocations({ handler: 'read', namespace: reader.namespace, env: reader.env, containers: 2, invocationsPerContainer: 3, event: (c, i) => ({ id: 4800 + c * 10 + i }) });
    expect(summary(reads)).toEqual({ ok: 6, errors: [] });
  }, 120_000);

  test('GIVEN db.r6gd.xlarge instances (4 vCPUs) WHEN the rehearsal runs THEN each instance is a host with a budget of 0.4 core', async () => {
    const status = await started!.rehearsal.status();
    for (const node of status.nodes) {
      const cgroups = readFileSync(`/proc/${node.pid}/cgroup`, 'utf8');
      expect(cgroups).toContain(`/aurora-proxy-kit/${rehearsalCgroupName(started!.rehearsal.settings)}/${node.name}`);
      const cpu = /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(cgroups)?.[1];
      if (cpu !== undefined) expect(readFileSync(`/sys/fs/cgroup/cpu${cpu}/cpu.cfs_quota_us`, 'utf8').trim()).toBe('40000');
    }
  });

  test('GIVEN the reader consumer WHEN it is pointed at its endpoint with verify-full THEN the host-name check fails, as on AWS', async () => {
    const reader = started!.rehearsal.consumers().find((c) => c.role === 'READ_ONLY')!;
    const env = Object.fromEntries(Object.entries(reader.env).filter(([name]) => name !== 'DB_TLS_SERVER_NAME'));
    const outcomes = await simulateInvocations({ handler: 'read', namespace: reader.namespace, env: { ...env, DB_TLS: 'verify-full' }, containers: 1, invocationsPerContainer: 1, event: () => ({ id: 4800 }) });
    expect(outcomes[0]!.error?.message).toMatch(/altname|Hostname\/IP does not match/i);
  }, 60_000);
});

// One after the other on the suite's block: the cloud assembly's hosts boot from its Fn::Sub user data, the
// plan's from the pgbouncer-proxy module's template rendered by Terraform.
live.each([
  ['cdk.out of the reference app with the PgBouncer engine', (): Parameters<typeof rehearsalFromDeployment> => [synthesizeReferenceApp({ proxyEngine: 'pgbouncer' }).dir]],
  [
    'the plan of examples/complete-pgbouncer',
    (): Parameters<typeof rehearsalFromDeployment> => {
      const { file, terraform } = planWithModules(COMPLETE_PGBOUNCER_EXAMPLE);
      return [file, terraform];
    },
  ],
])('rehearse up --from %s', (_label, source) => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;

  beforeAll(async () => {
    // The fleet boots its hosts from the deployment's user data: the packages object is built on the first boot.
    const { settings, deployment } = rehearsalFromDeployment(...source());
    started = await startRehearsal('fromDeploymentSuite', { ...settings, comparisonProxies: false, maxConnections: 60 }, deployment);
  }, 900_000);

  afterAll(async () => {
    const namespaces = started === undefined ? [] : rehearsalNetworkPlan(started.rehearsal.rehearsed).namespaces;
    const containers = started?.rehearsal.deploymentFleet()?.hosts.map((h) => h.booted.container.pid) ?? [];
    const workDir = started?.workDir;
    await stopRehearsal(started);
    expect((await listNamespaces()).filter((n) => namespaces.includes(n) || /^apk48-host\d+$/.test(n))).toEqual([]);
    expect(containers.filter((pid) => isAlive(pid))).toEqual([]);
    if (workDir !== undefined) expect(readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(workDir))).toEqual([]);
  }, 120_000);

  test('GIVEN the rehearsal WHEN its consumers run the real handlers THEN they reach the booted hosts through the interface endpoints by their EC2 names, verify-full', async () => {
    const consumers = started!.rehearsal.consumers();
    expect(consumers.map((c) => [c.role, c.env.DB_USER, c.env.DB_TLS, c.env.DB_PORT])).toEqual([
      ['READ_ONLY', 'app_reader', 'verify-full', '5433'],
      ['READ_WRITE', 'app_writer', 'verify-full', '5432'],
    ]);
    for (const c of consumers) expect(c.endpointHost).toMatch(/^vpce-[0-9a-f]{17}-[a-z0-9]{8}\.vpce-svc-[0-9a-f]{17}\.us-east-1\.vpce\.amazonaws\.com$/);
    const writer = consumers.find((c) => c.role === 'READ_WRITE')!;
    const reader = consumers.find((c) => c.role === 'READ_ONLY')!;
    const writes = await simulateInvocations({ handler: 'write', namespace: writer.namespace, env: writer.env, containers: 2, invocationsPerContainer: 3, event: (c, i) => ({ id: 4900 + c * 10 + i, payload: { from: 'fleet' } }) });
    expect(summary(writes)).toEqual({ ok: 6, errors: [] });
    const reads = await simulateInvocations({ handler: 'read', namespace: reader.namespace, env: reader.env, containers: 2, invocationsPerContainer: 3, event: (c, i) => ({ id: 4900 + c * 10 + i }) });
    expect(summary(reads)).toEqual({ ok: 6, errors: [] });
    // Served by the replicas, through a pool of the fleet (its server role), not by the rehearsal's own endpoints.
    const servedBy = reads.map((o) => (o.response as { served_by?: { in_recovery?: boolean } } | undefined)?.served_by?.in_recovery);
    expect(servedBy).toEqual(Array(6).fill(true));
  }, 180_000);

  test('GIVEN the fleet WHEN status is read THEN both hosts run and the load balancer stand-in passes both for each role', async () => {
    const fleet = (await started!.rehearsal.status()).fleet!;
    expect(fleet.hosts.map((h) => [h.name, h.alive])).toEqual([
      ['pooler-1', true],
      ['pooler-2', true],
    ]);
    expect(fleet.loadBalancer.healthy).toEqual({ READ_WRITE: ['pooler-1', 'pooler-2'], READ_ONLY: ['pooler-1', 'pooler-2'] });
    expect(fleet.endpoints.map((e) => [e.role, e.port])).toEqual([
      ['READ_ONLY', 5433],
      ['READ_WRITE', 5432],
    ]);
  }, 60_000);

  test('GIVEN the fleet WHEN the drill fails the writer over THEN no acknowledged write is lost and no read through the read-only listener is served by the writer', async () => {
    const { runRehearseCommand } = await import('../../../lib/rehearsal/cli');
    const { output, failed } = await runRehearseCommand(['drill', '--work-dir', started!.workDir]);
    expect(output).toMatch(/writes stood still \d+ ms; \d+ acknowledged, 0 lost/);
    expect(output).toMatch(/reads through the read-only listener: [1-9]\d*, 0 served by the writer/);
    expect(failed).toBe(false);
  }, 300_000);
});

live('a failed up --from', () => {
  test('GIVEN a deployment whose consumer user the role bootstrap refuses WHEN up fails after the network, budgets and servers exist THEN nothing is left: no process, namespace, link or cgroup', async () => {
    // GIVEN: a consumer logging in as a reserved name, which the bootstrap refuses once the writer runs
    const { dir } = synthesizeReferenceApp();
    const { settings, deployment: reference } = rehearsalFromDeployment(dir);
    const reserved = <T extends { user?: string; name?: string }>(x: T, key: 'user' | 'name'): T => ({ ...x, [key]: 'pg_reader' });
    const deployment = {
      ...reference,
      consumers: reference.consumers.map((c, i) => (i === 0 ? reserved(c, 'user') : c)),
      databaseRoles: reference.databaseRoles.map((r) => (r.name === reference.consumers[0]!.user ? reserved(r, 'name') : r)),
    };
    const workDir = mkdtempSync(join(tmpdir(), 'rehearsal-test-'));
    chmodSync(workDir, 0o755);
    const addressBlock = SUITE_BLOCKS.fromDeploymentSuite.block;
    try {
      // WHEN
      await expect(Rehearsal.up({ settings: { ...settings, workDir, addressBlock, replicas: 1, comparisonProxies: false, maxConnections: 40 }, deployment })).rejects.toThrow(/pg_reader starts with pg_ or rds/);

      // THEN
      const pids = readProcesses(new WorkDirLayout(workDir).processesFile).map((p) => p.pid);
      expect(pids.length).toBeGreaterThan(0);
      expect(pids.filter((pid) => isAlive(pid))).toEqual([]);
      const plan = rehearsalNetworkPlan({ addressBlock, deployment });
      expect((await listNamespaces()).filter((n) => plan.namespaces.includes(n))).toEqual([]);
      expect(execLinks().filter((l) => l.startsWith(plan.prefix))).toEqual([]);
      expect(budgetLeftovers(rehearsalCgroupName({ addressBlock }))).toEqual([]);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }, 180_000);
});

live('up --from a deployment without a role bootstrap', () => {
  test('GIVEN the reference app with its role bootstrap left out WHEN up runs and its consumers log in THEN no role is made and their logins fail, as on AWS', async () => {
    // GIVEN: what the topology reader gives for a deployment with no Custom::DatabaseRoles (test/rehearsal/role-bootstraps.test.ts)
    const rehearsal = rehearsalFromDeployment(synthesizeReferenceApp().dir);
    const deployment = { ...rehearsal.deployment, databaseRoles: [], roleBootstraps: [] };
    expect(formatNotReproduced(deployment)).toContain('no role bootstrap in the deployment: no database role is made');
    const started = await startRehearsal('fromDeploymentSuite', { ...rehearsal.settings, comparisonProxies: false, maxConnections: 40 }, deployment);
    try {
      // WHEN
      const writer = started.rehearsal.consumers().find((c) => c.role === 'READ_WRITE')!;
      const outcomes = await simulateInvocations({ handler: 'write', namespace: writer.namespace, env: writer.env, containers: 1, invocationsPerContainer: 1, event: () => ({ id: 4890, payload: { from: 'no-roles' } }) });
      // THEN: the writer has no such role
      expect(outcomes[0]!.error?.message).toMatch(/app_writer/);
      const roles = await query<{ rolname: string }>(started.rehearsal.adminEndpoint('writer'), "SELECT rolname FROM pg_roles WHERE rolname IN ('app_reader', 'app_writer')", undefined, 10_000);
      expect(roles).toEqual([]);
    } finally {
      await stopRehearsal(started);
    }
  }, 240_000);
});

/** Link names in the root namespace. */
function execLinks(): string[] {
  return execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0] ?? '')
    .filter((n) => n !== '');
}
