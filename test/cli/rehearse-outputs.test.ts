import { EndpointRole } from '../../lambda/src/environment';
import { AwsNames } from '../../lib/rehearsal/aws-names';
import { formatOutputs, formatStatusJson, rehearsalAwsNames, rehearsalFromDeployment, rehearsalNetwork, resolveSettings, type RehearsalConnectionNames, type RehearsedDeployment, type RehearsalStatus, type ResolvedSettings } from '../../lib/rehearsal';
import type { Endpoint, Endpoints } from '../../lib/rehearsal/types';
import { removeFixtures, synthesizeReferenceApp } from '../rehearsal/topology-fixtures';

/**
 * `rehearse outputs` and `status --json` after `up --from`: what a user needs to connect by the
 * deployment's names, from the settings alone (nothing is started: the names are derived, not served).
 */

const endpoint = (name: string, port: number): Endpoint => ({ name, host: '198.18.9.101', port, database: 'app', user: 'app', password: 'zpassword-of-the-endpointz', caFile: '/tmp/ca.pem' });
const ENDPOINTS = { readWrite: endpoint('read-write', 5432), readOnly: endpoint('read-only', 5433), writer: endpoint('writer', 5432) } as unknown as Endpoints;

interface AwsOutputs {
  region: string;
  data_namespace: string;
  consumer_namespaces: Record<string, string>;
  cluster_endpoint: string;
  reader_endpoint: string;
  proxy_default_endpoint: string;
  endpoints: Array<{ name: string; role: string; vpc: string; namespace: string; host: string; port: number }>;
}

describe('rehearse outputs and status --json: AWS-shaped names after --from', () => {
  afterAll(removeFixtures);
  let settings: ResolvedSettings;
  let deployment: RehearsedDeployment;
  let names: RehearsalConnectionNames | null;

  beforeAll(() => {
    // GIVEN the reference app's cloud assembly, as `rehearse up --from cdk.out` reads it
    const { dir } = synthesizeReferenceApp();
    const rehearsal = rehearsalFromDeployment(dir);
    settings = resolveSettings(rehearsal.settings);
    deployment = rehearsal.deployment;
    names = rehearsalNetwork(settings, deployment).connectionNames();
  });

  test('GIVEN a rehearsal of a deployment WHEN outputs are printed THEN they carry its endpoints\' AWS-shaped names, ports and namespaces', () => {
    // WHEN
    const outputs = JSON.parse(formatOutputs(ENDPOINTS, names)) as { read_write: { port: number }; aws: AwsOutputs };
    // THEN the fields Terratest reads are still there
    expect(outputs.read_write.port).toBe(5432);
    const awsNames: AwsNames = rehearsalAwsNames({ ...settings, deployment });
    const aws = outputs.aws;
    expect(aws.region).toBe(deployment.region);
    expect(aws.cluster_endpoint).toBe(awsNames.clusterEndpoint(deployment.clusterName));
    expect(aws.reader_endpoint).toBe(awsNames.readerEndpoint(deployment.clusterName));
    expect(aws.proxy_default_endpoint).toBe(awsNames.proxyDefaultEndpoint(deployment.proxyName));
    // every endpoint of the deployment, by its name, in the namespace of its VPC, on its role's port
    expect(aws.endpoints.map((e) => e.name).sort()).toEqual(deployment.endpoints.map((e) => e.name).sort());
    for (const e of aws.endpoints) {
      const declared = deployment.endpoints.find((d) => d.name === e.name)!;
      expect(e).toEqual({
        name: declared.name,
        role: declared.role,
        vpc: declared.isDefault ? 'data' : declared.vpc,
        namespace: declared.isDefault ? aws.data_namespace : aws.consumer_namespaces[declared.vpc],
        host: declared.isDefault ? awsNames.proxyDefaultEndpoint(deployment.proxyName) : awsNames.proxyCustomEndpoint(deployment.proxyName, declared.name),
        port: declared.role === EndpointRole.READ_ONLY ? 5433 : 5432,
      });
    }
    // each consumer's VPC has its namespace
    for (const c of deployment.consumers) expect([c.name, aws.consumer_namespaces[c.vpc]]).toEqual([c.name, expect.stringMatching(/^apk\d+-/)]);
  });

  test('GIVEN the same rehearsal WHEN status --json is printed THEN it carries the same names and no password', () => {
    // WHEN
    const json = formatStatusJson({ settings, deployment, endpoints: ENDPOINTS } as unknown as RehearsalStatus);
    // THEN
    const status = JSON.parse(json) as { aws: { proxy: { defaultEndpoint: string }; endpoints: Array<{ host: string; namespace: string }> } };
    const outputs = JSON.parse(formatOutputs(ENDPOINTS, names)) as { aws: AwsOutputs };
    expect(status.aws.proxy.defaultEndpoint).toBe(outputs.aws.proxy_default_endpoint);
    expect(status.aws.endpoints.map((e) => [e.host, e.namespace])).toEqual(outputs.aws.endpoints.map((e) => [e.host, e.namespace]));
    expect(json).not.toContain('zpassword-of-the-endpointz');
  });

  test('GIVEN a rehearsal on loopback WHEN outputs are printed THEN aws is null: no hosts file resolves the names there', () => {
    const outputs = JSON.parse(formatOutputs(ENDPOINTS, rehearsalNetwork({ ...settings, network: 'loopback' }, deployment).connectionNames())) as { aws: unknown };
    expect(outputs.aws).toBeNull();
  });
});
