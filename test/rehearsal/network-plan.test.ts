/** The network plan from a description: addresses, names, refusals (pure; nothing is made). */
import { writeFileSync } from 'node:fs';
import {
  addressOf,
  addressPlan,
  consumerOf,
  consumerVpcEndpoints,
  DEFAULT_LOOPBACK_BLOCK,
  namespaceOfAddress,
  planNetwork,
  rehearsalNetworkPlan,
  RehearsalConfigError,
  rehearsalNetwork,
  resolveSettings,
  WorkDirLayout,
  validateSettings,
  type NetworkDescription,
} from '../../lib/rehearsal';
import { readState } from '../../lib/rehearsal/state';
import { scratchDirPerTest } from '../helpers/scratch-dir';
import { SUITE_BLOCKS } from '../support/loopback-blocks';

const description: NetworkDescription = {
  addressBlock: SUITE_BLOCKS.endpointsSuite.block,
  dataHosts: [
    { key: 'writer', hostNumber: 2, names: ['kit-writer.example'] },
    { key: 'replica1', hostNumber: 3 },
    { key: 'proxy', hostNumber: 101, names: ['kit.proxy.example'] },
  ],
  consumers: [
    { vpc: 'app', endpoints: [{ key: 'app-ro', names: ['kit-ro.endpoint.example'] }, { key: 'app-rw' }] },
    { vpc: 'reports', endpoints: [{ key: 'reports-ro' }] },
  ],
};

describe('network plan', () => {
  const plan = planNetwork(description);

  test('GIVEN loopback block 127.0.31 WHEN planned THEN the rehearsal gets 198.18.31.0/24, its data hosts at the loopback plan\'s last octets', () => {
    expect(plan.cidr).toBe('198.18.31.0/24');
    expect(plan.prefix).toBe('apk31');
    expect(plan.dataHosts.map((h) => h.address)).toEqual(['198.18.31.2', '198.18.31.3', '198.18.31.101']);
    expect(plan.management).toEqual({ rootLink: 'apk31-mgmt', dataLink: 'mgmt', rootAddress: '198.18.31.129', dataAddress: '198.18.31.130', prefixLength: 30 });
  });

  test('GIVEN two consumer VPCs WHEN planned THEN each has its own namespace and /28, endpoints from .1, the consumer at .14', () => {
    const app = consumerOf(plan, 'app');
    expect(app).toMatchObject({ namespace: 'apk31-app', subnet: '198.18.31.144/28', consumerAddress: '198.18.31.158', dataLink: 'eni-app', consumerLink: 'eth0' });
    expect(app.endpoints.map((e) => e.address)).toEqual(['198.18.31.145', '198.18.31.146']);
    expect(consumerOf(plan, 'reports')).toMatchObject({ subnet: '198.18.31.160/28', consumerAddress: '198.18.31.174' });
    expect(addressOf(plan, 'reports-ro')).toBe('198.18.31.161');
    expect(plan.namespaces).toEqual(['apk31-data', 'apk31-app', 'apk31-reports']);
  });

  test('GIVEN the largest plan WHEN planned THEN every link name fits the kernel\'s 15 characters and every address stays in the /24', () => {
    const largest = planNetwork({
      addressBlock: '127.1.255',
      dataHosts: [{ key: 'h', hostNumber: 126 }],
      consumers: Array.from({ length: 7 }, (_, i) => ({ vpc: `vpcnumber${i}`, endpoints: Array.from({ length: 13 }, (_, k) => ({ key: `e${i}-${k}` })) })),
    });
    expect(largest.cidr).toBe('198.19.255.0/24');
    const links = [largest.management.rootLink, largest.management.dataLink, ...largest.consumers.flatMap((c) => [c.dataLink, c.consumerLink])];
    expect(links.filter((l) => l.length > 15)).toEqual([]);
    const last = largest.consumers[6]!;
    expect(last.subnet).toBe('198.19.255.240/28');
    expect(last.endpoints.at(-1)!.address).toBe('198.19.255.253');
    expect(last.consumerAddress).toBe('198.19.255.254');
  });

  test('GIVEN names WHEN planned THEN one hosts file resolves every name everywhere (reach is the routes\' business)', () => {
    expect(plan.hostsFile.split('\n')).toEqual([
      '127.0.0.1\tlocalhost',
      '::1\tlocalhost ip6-localhost ip6-loopback',
      "# apk31: the rehearsal's names (aurora-proxy-kit)",
      '198.18.31.2\tkit-writer.example',
      '198.18.31.101\tkit.proxy.example',
      '198.18.31.145\tkit-ro.endpoint.example',
      '',
    ]);
  });

  test('GIVEN a bad description WHEN planned THEN every problem is named with its value and fix, before anything is made', () => {
    const bad: NetworkDescription = {
      addressBlock: '10.0.0',
      dataHosts: [{ key: 'writer', hostNumber: 2 }, { key: 'writer', hostNumber: 2 }, { key: 'x', hostNumber: 127, names: ['Bad_Name'] }],
      consumers: [{ vpc: 'data', endpoints: [] }, { vpc: 'averylongvpcname', endpoints: [{ key: 'e' }] }],
    };
    let error: RehearsalConfigError | undefined;
    try {
      planNetwork(bad);
    } catch (err) {
      error = err as RehearsalConfigError;
    }
    expect(error).toBeInstanceOf(RehearsalConfigError);
    expect(error!.problems).toEqual([
      'addressBlock 10.0.0 has no network of its own: use a loopback block 127.0.<b> or 127.1.<b>, which maps to 198.18.<b>.0/24 or 198.19.<b>.0/24',
      'key writer is used twice: give every host and endpoint its own key',
      'dataHosts writer hostNumber 2 is taken by another host: give each host its own number',
      'dataHosts x hostNumber 127 is outside the data VPC: use 1 to 126',
      'consumers vpc "data" is not a VPC name: use 1 to 10 lower-case letters and digits, starting with a letter, other than "data"',
      'consumers data has 0 endpoints: give it 1 to 13 (a consumer VPC reaches nothing but its endpoints)',
      'consumers vpc "averylongvpcname" is not a VPC name: use 1 to 10 lower-case letters and digits, starting with a letter, other than "data"',
      'name "Bad_Name" is not a host name for a hosts file: use lower-case labels of letters, digits and hyphens',
    ]);
  });

  test('GIVEN an unknown key or VPC WHEN looked up THEN the error lists what the plan has', () => {
    expect(() => addressOf(plan, 'nope')).toThrow(/key nope is not in the network plan apk31/);
    expect(() => consumerOf(plan, 'nope')).toThrow(/use one of app, reports/);
  });
});

describe("a rehearsal's own network (network 'namespaces')", () => {
  const settings = resolveSettings({ addressBlock: DEFAULT_LOOPBACK_BLOCK.block, network: 'namespaces' });

  test('GIVEN namespaces WHEN the address plan is made THEN the servers keep their last octets in the block\'s 198.18 /24', () => {
    expect(addressPlan(settings)).toEqual({ writer: '198.18.10.2', replicas: ['198.18.10.3', '198.18.10.4'], readWrite: '198.18.10.101', readOnly: '198.18.10.102', haproxy: '198.18.10.103', pgpool: '198.18.10.104' });
    expect(addressPlan({ ...settings, network: 'loopback' }).writer).toBe('127.0.10.2');
  });

  test('GIVEN the rehearsal\'s plan WHEN read THEN the data VPC holds every replica address the block allows, the pooler fleet\'s load balancer stand-in, the AWS emulator, and the app VPC the custom endpoints', () => {
    const plan = rehearsalNetworkPlan({ ...settings, deployment: undefined });
    expect(plan.dataHosts.map((h) => h.address.split('.')[3])).toEqual([...Array.from({ length: 16 }, (_, i) => String(2 + i)), '101', '102', '103', '104', '110', '120']);
    // The AWS names a booted host calls resolve to the emulator, in every namespace.
    expect(plan.hostsFile).toMatch(/^198\.18\.10\.120\ts3\.us-east-1\.amazonaws\.com secretsmanager\.us-east-1\.amazonaws\.com monitoring\.us-east-1\.amazonaws\.com cloudformation\.us-east-1\.amazonaws\.com apk-rehearsal-packages\.s3\.us-east-1\.amazonaws\.com$/m);
    const app = consumerVpcEndpoints({ ...settings, deployment: undefined });
    expect(app.namespace).toBe('apk10-app');
    expect(app.readOnly).toEqual({ host: expect.stringMatching(/^read-only\.endpoint\.proxy-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$/), address: '198.18.10.145' });
    expect(app.readWrite.address).toBe('198.18.10.146');
    expect(app.tlsServerName).toMatch(/^rehearsal\.proxy-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$/);
    expect(app.readOnly.host.endsWith(app.tlsServerName.slice('rehearsal'.length))).toBe(true);
  });

  test('GIVEN the rehearsal\'s plan WHEN the writer changes THEN the cluster endpoint\'s name moves to the new writer, as Aurora\'s DNS moves it', () => {
    const clusterLine = (writerKey?: string) => rehearsalNetworkPlan({ ...settings, deployment: undefined }, writerKey).hostsFile.split('\n').filter((l) => /\srehearsal\.cluster-[a-z0-9]{12}\./.test(l));
    expect(clusterLine()).toEqual([expect.stringMatching(/^198\.18\.10\.2\twriter\.[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com rehearsal\.cluster-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$/)]);
    expect(clusterLine('replica1')).toEqual([expect.stringMatching(/^198\.18\.10\.3\treplica1\.\S+ rehearsal\.cluster-/)]);
    // The reader endpoint stays on HAProxy, its analog.
    expect(rehearsalNetworkPlan({ ...settings, deployment: undefined }, 'replica1').hostsFile).toMatch(/^198\.18\.10\.103\trehearsal\.cluster-ro-[a-z0-9]{12}\./m);
  });

  test.each<[string, string | undefined]>([
    ['198.18.31.2', 'apk31-data'],
    ['198.19.4.101', 'apk260-data'],
    ['198.18.31.145', undefined],
    ['198.18.31.130', undefined],
    ['127.0.31.2', undefined],
  ])('GIVEN a server listening on %s WHEN placed THEN it runs in %s (undefined: the root namespace)', (address, namespace) => {
    expect(namespaceOfAddress(address)).toBe(namespace);
  });

  test('GIVEN an unknown network WHEN validated THEN the error names the values it takes', () => {
    expect(() => validateSettings(resolveSettings({ network: 'vpc' as never }))).toThrow(/network vpc is not a rehearsal network: use loopback or namespaces/);
  });
});

describe('the network as a value, chosen once from the setting', () => {
  const block = DEFAULT_LOOPBACK_BLOCK.block;
  const endpoint = { listenAddress: '198.18.10.102' } as never;

  test('GIVEN network loopback WHEN asked THEN its plan is the block\'s, it names nothing AWS-shaped, adds no listen address and refuses the pooler hosts with the fix', () => {
    const loopback = rehearsalNetwork({ addressBlock: block, network: 'loopback' });
    expect(loopback.name).toBe('loopback');
    expect(loopback.addressPlan(1)).toEqual({ writer: '127.0.10.2', replicas: ['127.0.10.3'], readWrite: '127.0.10.101', readOnly: '127.0.10.102', haproxy: '127.0.10.103', pgpool: '127.0.10.104' });
    expect([loopback.connectionNames(), loopback.certificateNames(), loopback.withConsumerEndpoint(endpoint, 'readOnly')]).toEqual([null, [], endpoint]);
    expect(loopback.available()).toBe(loopback);
    expect(() => loopback.namespacesFor('network loopback: use network namespaces')).toThrow(new RehearsalConfigError(['network loopback: use network namespaces']));
  });

  test('GIVEN network namespaces WHEN asked THEN its plan is the block\'s 198.18 /24, with the AWS-shaped names, the certificate\'s names and the custom endpoints\' addresses', () => {
    const namespaces = rehearsalNetwork({ addressBlock: block, network: 'namespaces' });
    expect(namespaces.name).toBe('namespaces');
    expect(namespaces.addressPlan(1).writer).toBe('198.18.10.2');
    const names = namespaces.connectionNames()!;
    expect([names.dataNamespace, names.consumerNamespaces]).toEqual(['apk10-data', { app: 'apk10-app' }]);
    expect(namespaces.certificateNames()).toContain(names.cluster.writerEndpoint);
    expect(namespaces.withConsumerEndpoint(endpoint, 'readOnly')).toEqual({ listenAddress: '198.18.10.102', extraListenAddresses: ['198.18.10.145'] });
    expect(namespaces.namespacesFor('unused').dataNamespace).toBe('apk10-data');
  });

  test('GIVEN no network named (a state file from before the setting) WHEN chosen THEN it is loopback: nothing to make or remove', () => {
    expect(rehearsalNetwork({ addressBlock: block }).name).toBe('loopback');
  });

  const workDir = scratchDirPerTest('rehearsal-state-');
  test('GIVEN a state file written when the settings carried the deployment WHEN read THEN the deployment is beside the settings, so down finds its namespaces', () => {
    const deployment = { proxyName: 'orders', consumerVpcs: [{ key: 'orders', sourceId: 'OrdersVpc' }] };
    const settings = resolveSettings({ addressBlock: block, network: 'namespaces' }, workDir());
    writeFileSync(new WorkDirLayout(workDir()).stateFile, JSON.stringify({ version: 1, settings: { ...settings, deployment }, processes: [] }));
    const state = readState(workDir())!;
    expect([state.settings, state.deployment]).toEqual([settings, deployment]);
  });
});
