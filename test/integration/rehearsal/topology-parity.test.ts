/**
 * The acceptance check of the topology readers: `rehearse topology --from cdk.out` and `--from plan.json`
 * describe the same reference deployment. Both sides are produced by the real tools (bin/app.ts's stack
 * synthesized; modules/examples/complete planned against the offline stand-in provider) and compared
 * through comparableTopology, which keeps the shape and settings and drops what the flavours name
 * differently by design (ids, generated names, VPC Name tags, the region an environment-agnostic stack
 * leaves open, the notes, and the wording of the not-reproducible entries); projection.ts lists each.
 */
import * as path from 'path';
import { comparableTopology, runRehearseCommand, type ComparableTopology, type DeployedTopology } from '../../../lib/rehearsal';
import { COMPLETE_EXAMPLE, planFile, removeFixtures, synthesizeReferenceApp } from '../../rehearsal/topology-fixtures';

async function topologyFrom(from: string): Promise<DeployedTopology> {
  const { output } = await runRehearseCommand(['topology', '--from', from, '--json']);
  return JSON.parse(output) as DeployedTopology;
}

describe('the reference deployment, from cdk.out and from plan.json', () => {
  let cdk: DeployedTopology;
  let terraform: DeployedTopology;
  let fromCdk: ComparableTopology;
  let fromPlan: ComparableTopology;
  let cdkOut: string;

  beforeAll(async () => {
    // GIVEN cdk.out of bin/app.ts and plan.json of modules/examples/complete, both with default settings
    cdkOut = synthesizeReferenceApp().dir;
    const { file } = planFile(COMPLETE_EXAMPLE);
    // WHEN `rehearse topology --from ... --json` reads each
    cdk = await topologyFrom(cdkOut);
    terraform = await topologyFrom(file);
    fromCdk = comparableTopology(cdk);
    fromPlan = comparableTopology(terraform);
  }, 300_000);
  afterAll(removeFixtures);

  test('THEN they read as the two flavours', () => {
    expect(cdk.source.kind).toBe('cdk-assembly');
    expect(terraform.source.kind).toBe('terraform-plan');
  });

  test.each(['cluster', 'proxy', 'endpoints', 'vpcs', 'consumers', 'notReproducible'] as const)('THEN the same %s', (key) => {
    expect(fromPlan[key]).toEqual(fromCdk[key]);
  });

  test('THEN the shared picture is the reference deployment: 2 readers, 3 endpoints, both consumers in the consumer VPC', () => {
    expect(fromCdk.cluster.readerClasses).toEqual(['db.r6gd.xlarge', 'db.r6gd.xlarge']);
    expect(fromCdk.endpoints).toEqual(['added READ_ONLY endpoint in 10.20.0.0/16', 'added READ_WRITE endpoint in 10.20.0.0/16', 'default READ_WRITE endpoint in 10.10.0.0/16']);
    expect(fromCdk.consumers.map((c) => [c.vpc, c.endpoint, c.environment.DB_USER, c.environment.DB_TLS_SERVER_NAME])).toEqual([
      ['10.20.0.0/16', 'added READ_ONLY endpoint in 10.20.0.0/16', 'app_reader', 'host of the default READ_WRITE endpoint in 10.10.0.0/16'],
      ['10.20.0.0/16', 'added READ_WRITE endpoint in 10.20.0.0/16', 'app_writer', 'host of the default READ_WRITE endpoint in 10.10.0.0/16'],
    ]);
  });

  test('THEN what the projection leaves out does differ, for the reasons it gives', () => {
    // Names: CDK generates them from construct paths; the Terraform example derives them from var.name.
    expect(cdk.proxy.name).not.toBe(terraform.proxy.name);
    expect(cdk.cluster.identifier).not.toBe(terraform.cluster.identifier);
    // Region: the CDK stack is environment-agnostic; the plan has its provider's region.
    expect(cdk.region).toBeUndefined();
    expect(terraform.region).toBe('us-east-1');
  });

  test('WHEN the text form is asked for THEN it names the readers, the endpoints and the settings it implies', async () => {
    const { output } = await runRehearseCommand(['topology', '--from', path.join(cdkOut, 'manifest.json')]);
    expect(output).toContain('2 readers');
    expect(output).toMatch(/READ_ONLY {3}added {5}\S+ {2}in AuroraProxyKit\/ConsumerVpc \(10\.20\.0\.0\/16\)/);
    expect(output).toContain('Rehearsal settings it implies: --replicas 2 --port 5432 --max-connections-percent 99 --max-idle-connections-percent 5 --borrow-timeout 120');
  });
});
