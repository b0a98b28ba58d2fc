/**
 * Network namespaces like VPCs, made for real (as root; skipped otherwise): what a consumer VPC can
 * reach, what the root namespace can, that processes started through hostCommand keep their pid, and
 * that setup and teardown leave nothing behind, also when setup fails halfway.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import {
  AwsNames,
  IsolationSetupError,
  KIT_NAMESPACE,
  addressOf,
  consumerOf,
  listNamespaces,
  namespacePids,
  networkLeftovers,
  planNetwork,
  serverOsUser,
  setUpNetwork,
  tearDownNetwork,
  unreachableRangeRouted,
  type NetworkDescription,
} from '../../../lib/rehearsal';
import { SUITE_BLOCKS } from '../../support/loopback-blocks';
import { CONNECT_PROBE, GREETING_SERVER, RESOLVE_PROBE, liveUnavailable, runNode, startNode, type Started } from './isolation';

const names = new AwsNames('network-suite');
const description: NetworkDescription = {
  addressBlock: SUITE_BLOCKS.networkSuite.block,
  dataHosts: [
    { key: 'writer', hostNumber: 2, names: [names.instanceEndpoint('kit-writer'), names.clusterEndpoint('kit')] },
    { key: 'replica1', hostNumber: 3, names: [names.instanceEndpoint('kit-reader-1')] },
    { key: 'proxy', hostNumber: 101, names: [names.proxyDefaultEndpoint('kit')] },
  ],
  consumers: [
    { vpc: 'app', endpoints: [{ key: 'app-ro', names: [names.proxyCustomEndpoint('kit', 'app-ro')] }, { key: 'app-rw', names: [names.proxyCustomEndpoint('kit', 'app-rw')] }] },
    { vpc: 'reports', endpoints: [{ key: 'reports-ro', names: [names.proxyCustomEndpoint('kit', 'reports-ro')] }] },
  ],
};
const plan = planNetwork(description);
const PORT = 5432;
const at = (key: string): string => `${addressOf(plan, key)}:${PORT}`;
const ipJson = <T>(...args: string[]): T => JSON.parse(execFileSync('ip', ['-j', ...args], { encoding: 'utf8' }) || '[]') as T;
const inside = (ns: string, ...command: string[]): string => execFileSync('ip', ['netns', 'exec', ns, ...command], { encoding: 'utf8' }).trim();
const kitLinks = (): string[] => ipJson<Array<{ ifname: string }>>('link', 'show').map((l) => l.ifname).filter((n) => n.startsWith(`${plan.prefix}-`));

const live = liveUnavailable === undefined ? describe : describe.skip;
if (liveUnavailable !== undefined) console.warn(`network namespace suites skipped: ${liveUnavailable}`);


/**
 * Whether the unreachable route is there, with the kit's namespaces seen around that read: suites in
 * other workers make and remove theirs meanwhile, so read until the list is the same on both sides.
 */
async function unreachableRouteWithNamespaces(): Promise<{ otherKitNamespaces: string[]; routed: boolean }> {
  const kitNamespaces = async (): Promise<string[]> => (await listNamespaces()).filter((ns) => KIT_NAMESPACE.test(ns)).sort();
  // Other suites set up and tear down networks meanwhile: a reading counts once the namespaces stood still
  // across it and agree with the route, or after 5 s (another setup sits between its namespace and its route
  // for a moment).
  for (let attempt = 0; ; attempt++) {
    const before = await kitNamespaces();
    const routed = await unreachableRangeRouted();
    const after = await kitNamespaces();
    if ((before.join() === after.join() && routed === after.length > 0) || attempt === 50) return { otherKitNamespaces: after, routed };
    await new Promise((r) => setTimeout(r, 100));
  }
}

live('a rehearsal network shaped like VPCs', () => {
  let server: Started | undefined;

  beforeAll(async () => {
    // Twice: the second run clears the first one's namespaces and makes them again.
    await setUpNetwork(plan);
    await setUpNetwork(plan);
    server = await startNode({ namespace: plan.dataNamespace, user: serverOsUser(), args: ['-e', GREETING_SERVER, at('writer'), at('replica1'), at('proxy'), at('app-ro'), at('reports-ro')] }, /listening/);
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    await tearDownNetwork(plan).catch(() => undefined);
  }, 30_000);

  test('GIVEN a server started through hostCommand WHEN inspected THEN its pid is the program itself, in the data namespace, as postgres', () => {
    const pid = server!.pid;
    expect(realpathSync(readlinkSync(`/proc/${pid}/exe`))).toBe(realpathSync(process.execPath));
    expect(readlinkSync(`/proc/${pid}/ns/net`)).toBe(`net:[${statSync(`/run/netns/${plan.dataNamespace}`).ino}]`);
    const uid = serverOsUser()?.uid ?? process.getuid!();
    expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\t${uid}\\t${uid}\\t${uid}\\t${uid}$`, 'm'));
  });

  test('GIVEN the app VPC WHEN its consumer connects THEN it reaches its own endpoints and nothing else: network unreachable', async () => {
    const app = consumerOf(plan, 'app');
    const results = await runNode<Record<string, string>>({ namespace: app.namespace, args: ['-e', CONNECT_PROBE, at('app-ro'), at('writer'), at('replica1'), at('proxy'), at('reports-ro')] });
    expect(results).toEqual({
      [at('app-ro')]: `hello from ${addressOf(plan, 'app-ro')}`,
      [at('writer')]: 'ENETUNREACH',
      [at('replica1')]: 'ENETUNREACH',
      [at('proxy')]: 'ENETUNREACH',
      [at('reports-ro')]: 'ENETUNREACH',
    });
  });

  test('GIVEN the root namespace WHEN it connects THEN the management link reaches instances and endpoints', async () => {
    const results = await runNode<Record<string, string>>({ args: ['-e', CONNECT_PROBE, at('writer'), at('app-ro')] });
    expect(results).toEqual({ [at('writer')]: `hello from ${addressOf(plan, 'writer')}`, [at('app-ro')]: `hello from ${addressOf(plan, 'app-ro')}` });
  });

  test("GIVEN the consumer's hosts file WHEN AWS-shaped names are resolved inside THEN they give the planned addresses", async () => {
    const app = consumerOf(plan, 'app');
    const wanted = [names.proxyCustomEndpoint('kit', 'app-ro'), names.clusterEndpoint('kit'), names.proxyDefaultEndpoint('kit')];
    const resolved = await runNode<Record<string, string>>({ namespace: app.namespace, args: ['-e', RESOLVE_PROBE, ...wanted] });
    expect(resolved).toEqual({ [wanted[0]!]: addressOf(plan, 'app-ro'), [wanted[1]!]: addressOf(plan, 'writer'), [wanted[2]!]: addressOf(plan, 'proxy') });
  });

  test('GIVEN the namespaces WHEN inspected THEN forwarding is off everywhere, a consumer has its connected route only, and 198.18.0.0/15 is unreachable from root', async () => {
    for (const ns of plan.namespaces) expect(inside(ns, 'cat', '/proc/sys/net/ipv4/ip_forward')).toBe('0');
    const routes = ipJson<Array<{ dst: string }>>('-n', consumerOf(plan, 'app').namespace, 'route', 'show', 'table', 'main');
    expect(routes.map((r) => r.dst)).toEqual(['198.18.38.144/28']);
    expect(await unreachableRangeRouted()).toBe(true);
    expect(inside(plan.dataNamespace, 'ip', 'addr', 'show', 'dev', 'lo')).toMatch(/inet 198\.18\.38\.2\/32[\s\S]*inet 198\.18\.38\.3\/32[\s\S]*inet 198\.18\.38\.101\/32/);
  });

  test('GIVEN a process still in the data namespace WHEN tearing down THEN it refuses, names the pid, and removes nothing', async () => {
    const before = await networkLeftovers(plan);
    await expect(tearDownNetwork(plan)).rejects.toThrow(new RegExp(`namespace ${plan.dataNamespace} still has processes .*${server!.pid}`));
    expect(await networkLeftovers(plan)).toEqual(before);
  });

  test('GIVEN the server stopped by pid WHEN torn down THEN no namespace, link, route or hosts dir of the plan is left', async () => {
    await server!.stop();
    expect(await namespacePids(plan.dataNamespace)).toEqual([]);
    await tearDownNetwork(plan);
    expect(await networkLeftovers(plan)).toEqual([]);
    expect(kitLinks()).toEqual([]);
    const { otherKitNamespaces, routed } = await unreachableRouteWithNamespaces();
    expect(routed).toBe(otherKitNamespaces.length > 0);
    // A second teardown finds nothing to do.
    await expect(tearDownNetwork(plan)).resolves.toBeUndefined();
  }, 30_000);
});

live('a network setup that fails halfway', () => {
  // Someone else's route for the rehearsal's /24: the data namespace and the management link exist by
  // the time setup tries to route the /24 through it.
  const conflict = ['route', 'add', 'blackhole', plan.cidr];

  afterAll(async () => {
    execFileSync('ip', ['route', 'del', 'blackhole', plan.cidr], { stdio: 'ignore' });
    await tearDownNetwork(plan).catch(() => undefined);
  });

  test('GIVEN a route conflict WHEN setting up THEN it fails naming the step, and leaves no namespace, link, route or hosts dir', async () => {
    execFileSync('ip', conflict);
    const error = await setUpNetwork(plan).then(() => undefined, (err: unknown) => err);
    expect(error).toBeInstanceOf(IsolationSetupError);
    expect((error as Error).message).toMatch(/^setting up the network apk38 failed \(everything it had made is removed\): `ip route add 198\.18\.38\.0\/24 via 198\.18\.38\.130 dev apk38-mgmt` failed: .*File exists/);
    expect(await networkLeftovers(plan)).toEqual([]);
    expect(kitLinks()).toEqual([]);
    const { otherKitNamespaces, routed } = await unreachableRouteWithNamespaces();
    expect(routed).toBe(otherKitNamespaces.length > 0);
  }, 30_000);
});
