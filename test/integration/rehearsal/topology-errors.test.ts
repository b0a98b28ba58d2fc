/**
 * Inputs without what a topology needs: each refused with a TopologyInputError that names the file,
 * what is missing and the fix, and the CLI's usage errors for a bad --from (exit code 2: nothing starts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AuroraOptimizedReads, RdsProxy } from '../../../lib';
import { renderPoolerBootstrap } from '../../../lib/model/pgbouncer-bootstrap';
import {
  isUsageProblem,
  loadTopology,
  parseArgs,
  RehearsalConfigError,
  runRehearseCommand,
  settingsFromTopology,
  topologyFromCdkOut,
  topologyFromPlan,
  TopologyInputError,
} from '../../../lib/rehearsal';
import { ROOT, TerraformDir } from '../../terraform/terraform-cli';
import { planFile, removeFixtures, synthesize, synthesizeReferenceApp, userRootModule } from '../../rehearsal/topology-fixtures';

afterAll(removeFixtures);

const isolatedVpc = (stack: Stack, id: string): ec2.Vpc => new ec2.Vpc(stack, id, { natGateways: 0, maxAzs: 2, subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }] });

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe('cloud assemblies without the needed pieces', () => {
  test('GIVEN an app with a cluster and no proxy WHEN read THEN the error names the template and says a proxy is needed', () => {
    const dir = synthesize((app) => {
      const stack = new Stack(app, 'NoProxy');
      new AuroraOptimizedReads(stack, 'Database', { vpc: isolatedVpc(stack, 'Vpc') });
    });
    const err = thrown(() => topologyFromCdkOut(dir));
    expect(err).toBeInstanceOf(TopologyInputError);
    expect(err.message).toBe(`no AWS::RDS::DBProxy in ${path.join(dir, 'NoProxy.template.json')}: rehearse needs a proxy (an RdsProxy or a PgBouncerProxy)`);
  });

  test('GIVEN the reference app with the PgBouncer engine WHEN read THEN the fleet, its user data as deployed and its interface endpoints are the pooling tier', () => {
    const { dir } = synthesizeReferenceApp({ proxyEngine: 'pgbouncer' });
    const t = topologyFromCdkOut(dir);
    // The launch template's Fn::Sub text is the kit's bootstrap, its values split into literals and deploy-time ones.
    expect(t.fleet?.userData).toBe(renderPoolerBootstrap());
    expect(t.fleet?.hosts).toBe(2);
    expect(t.fleet?.values.ClusterEndpoint).toEqual({ kind: 'unknown', detail: expect.stringContaining('Endpoint.Address') });
    expect(t.fleet?.values.ServerUser).toEqual({ kind: 'literal', value: 'apk_pooler_reader' });
    const added = t.endpoints.filter((e) => !e.isDefault);
    expect(added.map((e) => e.role).sort()).toEqual(['READ_ONLY', 'READ_WRITE']);
    expect(new Set(added.map((e) => e.vpc))).toEqual(new Set([t.consumers[0]!.vpc]));
    // Each consumer's DB_HOST (the first DNS entry of an interface endpoint) resolves to the endpoint of its role.
    for (const c of t.consumers) expect(added.find((e) => e.id === c.endpoint)?.role).toBe(c.connection.endpointRole);
    const ids = t.notReproducible.map((n) => n.id);
    expect(ids).toEqual(expect.arrayContaining(['host-image', 'load-balancer', 'aws-apis']));
    // The fleet is PgBouncer in transaction pooling, as deployed: no RDS Proxy pinning to stand in for.
    expect(ids).not.toContain('session-pinning');
  });

  test('GIVEN an app with only a VPC WHEN read THEN the error says an Aurora cluster is needed', () => {
    const dir = synthesize((app) => isolatedVpc(new Stack(app, 'OnlyVpc'), 'Vpc'));
    expect(() => topologyFromCdkOut(dir)).toThrow(`no AWS::RDS::DBCluster in ${path.join(dir, 'OnlyVpc.template.json')}: rehearse needs an Aurora cluster (an AuroraOptimizedReads)`);
  });

  test('GIVEN two proxies in front of the cluster WHEN read THEN the error lists both and says the rehearsal models one', () => {
    const dir = synthesize((app) => {
      const stack = new Stack(app, 'TwoProxies');
      const cluster = new AuroraOptimizedReads(stack, 'Database', { vpc: isolatedVpc(stack, 'Vpc') });
      new RdsProxy(stack, 'First', { cluster });
      new RdsProxy(stack, 'Second', { cluster });
    });
    expect(() => topologyFromCdkOut(dir)).toThrow(/^2 AWS::RDS::DBProxy \(TwoProxies\/First\w+, TwoProxies\/Second\w+\) in .*TwoProxies\.template\.json: rehearse models one; synthesize an app with a proxy \(an RdsProxy or a PgBouncerProxy\) only$/);
  });

  test('GIVEN a consumer whose DB_ENDPOINT_ROLE is not a role WHEN read THEN the error names the function, the variable, the value and the roles', () => {
    const dir = synthesize((app) => {
      const stack = new Stack(app, 'BadConsumer');
      const vpc = isolatedVpc(stack, 'Vpc');
      const cluster = new AuroraOptimizedReads(stack, 'Database', { vpc, readers: 1 });
      const proxy = new RdsProxy(stack, 'Proxy', { cluster });
      const endpoint = proxy.addReadOnlyEndpoint('Reports', { vpc });
      new lambda.Function(stack, 'Reporter', {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler = async () => null;'),
        environment: { DB_HOST: endpoint.hostname, DB_ENDPOINT_ROLE: 'READ_MOSTLY' },
      });
    });
    expect(() => topologyFromCdkOut(dir)).toThrow(/^consumer BadConsumer\/Reporter\w+ has DB_ENDPOINT_ROLE=READ_MOSTLY in .*BadConsumer\.template\.json: the consumers' contract needs one of READ_ONLY, READ_WRITE$/);
  });

  test('GIVEN a directory without manifest.json WHEN read THEN the error says how to synthesize one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'topology-empty-'));
    try {
      expect(() => topologyFromCdkOut(dir)).toThrow(`no manifest.json in ${dir}: pass the directory \`cdk synth\` writes: run \`npx cdk synth --quiet --output cdk.out\` (or \`make synth\`) first; a cloud assembly holds manifest.json beside the templates`);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});

describe('plans without the needed pieces', () => {
  const databaseOnly = `
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 6.0" }
  }
}

module "database" {
  source             = "@MODULES@/aurora-optimized-reads"
  cluster_identifier = "solo"
  vpc_id             = "vpc-0cccccccccccccccc"
  subnet_ids         = ["subnet-0cccccccccccccc01", "subnet-0cccccccccccccc02"]
}
`;

  test('GIVEN a plan of a root module with the cluster module only WHEN read THEN the error names the plan and says a proxy is needed', () => {
    const { file, plan } = planFile(userRootModule(databaseOnly));
    expect(() => topologyFromPlan(plan, file)).toThrow(`no aws_db_proxy in ${file}: rehearse needs a proxy (the rds-proxy module or the pgbouncer-proxy module)`);
  }, 300_000);

  test('GIVEN the binary plan file itself WHEN loaded THEN the error says how to turn it into JSON', () => {
    const dir = userRootModule(databaseOnly);
    const terraform = new TerraformDir(dir);
    try {
      terraform.init();
      const binary = path.join(dir, 'plan.tfplan');
      expect(terraform.run(['plan', '-input=false', '-lock=false', `-out=${binary}`]).status).toBe(0);
      expect(() => loadTopology(binary)).toThrow(`${binary} is a binary plan file: convert it first: terraform show -json ${binary} > plan.json, then pass plan.json`);
    } finally {
      terraform.dispose();
    }
  }, 300_000);

  test('GIVEN JSON that is not a plan WHEN loaded THEN the error says which command makes one', () => {
    const file = path.join(ROOT, 'package.json');
    expect(() => loadTopology(file)).toThrow(`no resource_changes in ${file}: pass \`terraform show -json <planfile>\` output: terraform plan -out=plan.tfplan && terraform show -json plan.tfplan > plan.json`);
  });

  test('GIVEN a plan object without its configuration WHEN read THEN the error says the configuration is needed', () => {
    expect(() => topologyFromPlan({ format_version: '1.2', resource_changes: [] }, 'trimmed.json')).toThrow(/^no configuration\.root_module in trimmed\.json: /);
  });
});

describe('rehearse topology: usage', () => {
  test('GIVEN no --from or an empty one WHEN parsed THEN a usage error says what to pass', () => {
    expect(() => parseArgs(['topology'])).toThrow('topology needs --from <cdk.out directory | plan.json> (terraform show -json <planfile> > plan.json)');
    expect(() => parseArgs(['topology', '--from='])).toThrow('topology needs --from');
    expect(() => parseArgs(['topology', '--from'])).toThrow('--from needs a value');
  });

  test('GIVEN --from on another command WHEN parsed THEN it is refused', () => {
    expect(() => parseArgs(['status', '--from', 'cdk.out'])).toThrow('--from is an option of up and topology, not of status');
    expect(() => parseArgs(['up', '--from', 'cdk.out'])).not.toThrow();
  });

  test('GIVEN a --from path that does not exist WHEN run THEN a TopologyInputError, which the CLI reports as a usage problem (exit 2)', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-cdk-out-for-topology');
    const err = await runRehearseCommand(['topology', '--from', missing]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TopologyInputError);
    expect((err as Error).message).toBe(`${missing} does not exist: pass a cloud assembly directory (cdk.out) or \`terraform show -json\` output (plan.json)`);
    expect(isUsageProblem(err)).toBe(true);
  });

  test('GIVEN a topology of a non-PostgreSQL engine WHEN mapped to settings THEN the rehearsal refuses it', () => {
    const t = topologyFromCdkOut(synthesizeReferenceApp({ readers: '1' }).dir);
    expect(() => settingsFromTopology({ ...t, cluster: { ...t.cluster, engine: 'aurora-mysql' } })).toThrow(RehearsalConfigError);
  });
});
