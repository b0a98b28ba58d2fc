import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { INSTANCE_CLASS_CATALOG, optimizedReadsSizing } from '../../lib/model';
import { renderPoolerBootstrap, substitutePlaceholders } from '../../lib/model/pgbouncer-bootstrap';
import { PlanJson, ROOT, ResourceChange, TerraformDir } from './terraform-cli';

/**
 * modules/examples/complete-pgbouncer planned offline with the stand-in provider: the PgBouncer fleet
 * mirrors the CDK construct PgBouncerProxy resource for resource, and its user data is the model's
 * bootstrap filled by templatefile with the fleet's values.
 */

const TEMPLATE = path.join(ROOT, 'modules/pgbouncer-proxy/templates/bootstrap.sh.tftpl');
const placeholders = (template: string): string[] => [...new Set([...template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]!))].sort();
/** What Fn::Sub does to the template: each `${Name}` replaced by its value. */

describe('examples/complete-pgbouncer plan', () => {
  let dir: TerraformDir;
  let plan: PlanJson;
  let pooler: Array<{ address: string; expressions: Record<string, unknown> }>;
  const changes = (type: string): ResourceChange[] => plan.resource_changes.filter((r) => r.type === type && r.address.startsWith('module.pooler.') && r.mode === 'managed');
  /** The data sources read at plan (known inputs): they are in the prior state, not in resource_changes. */
  const dataSources = (): Array<{ address: string; type: string; values: Record<string, unknown> }> =>
    ((plan as unknown as { prior_state?: { values?: { root_module?: { child_modules?: Array<{ resources?: Array<{ address: string; type: string; mode: string; values: Record<string, unknown> }> }> } } } }).prior_state?.values?.root_module?.child_modules ?? [])
      .flatMap((m) => m.resources ?? [])
      .filter((r) => r.mode === 'data');
  const after = (address: string): Record<string, unknown> => plan.resource_changes.find((r) => r.address === `module.pooler.${address}`)!.change.after!;

  beforeAll(() => {
    // GIVEN the example with its defaults
    dir = new TerraformDir(path.join(ROOT, 'modules/examples/complete-pgbouncer'));
    // WHEN it is planned
    plan = dir.planJson();
    pooler = (plan.configuration.root_module as unknown as { module_calls: Record<string, { module: { resources: typeof pooler } }> }).module_calls.pooler.module.resources;
  }, 300_000);

  afterAll(() => dir?.dispose());

  test('the template file is the model\'s bootstrap, byte for byte', () => {
    expect(fs.readFileSync(TEMPLATE, 'utf8')).toBe(renderPoolerBootstrap());
  });

  test('the hosts: a fixed-size group of two on a pinned launch template version, refreshed one host at a time', () => {
    expect(changes('aws_autoscaling_group').map((r) => r.change.after)).toEqual([
      expect.objectContaining({ min_size: 2, max_size: 2, desired_capacity: 2, health_check_type: 'ELB', instance_refresh: [expect.objectContaining({ strategy: 'Rolling', preferences: [expect.objectContaining({ min_healthy_percentage: 50 })] })] }),
    ]);
    const asg = pooler.find((r) => r.address === 'aws_autoscaling_group.this')!;
    expect(JSON.stringify(asg.expressions.launch_template)).toContain('aws_launch_template.this.latest_version');
  });

  test('the launch template: Debian 13 arm64 from Debian\'s public parameter, IMDSv2 only, encrypted gp3 root, no public address, no key pair', () => {
    const lt = after('aws_launch_template.this');
    expect(lt).toEqual(
      expect.objectContaining({
        instance_type: 'c7g.large',
        metadata_options: [expect.objectContaining({ http_tokens: 'required', http_put_response_hop_limit: 1 })],
        monitoring: [{ enabled: true }],
        block_device_mappings: [expect.objectContaining({ device_name: '/dev/xvda', ebs: [expect.objectContaining({ encrypted: 'true', volume_type: 'gp3', volume_size: 8, delete_on_termination: 'true' })] })],
        network_interfaces: [expect.objectContaining({ associate_public_ip_address: 'false' })],
      }),
    );
    expect(lt.key_name ?? null).toBeNull();
    expect(dataSources().find((d) => d.address === 'module.pooler.data.aws_ssm_parameter.debian')?.values).toEqual(expect.objectContaining({ name: '/aws/service/debian/release/13/latest/arm64' }));
    expect(JSON.stringify(pooler.find((r) => r.address === 'aws_launch_template.this')!.expressions.image_id)).toContain('data.aws_ssm_parameter.debian');
  });

  test('the user data is base64 of templatefile of the bootstrap with a value for every placeholder, the CDK construct\'s values', () => {
    const lt = pooler.find((r) => r.address === 'aws_launch_template.this')!;
    expect(JSON.stringify(lt.expressions.user_data)).toMatch(/local\.bootstrap_variables/);
    const values = plan.output_changes!.bootstrap_variables.after as Record<string, unknown>;
    const unknown = ((plan.output_changes!.bootstrap_variables as unknown as { after_unknown: Record<string, boolean> }).after_unknown ?? {}) as Record<string, boolean>;
    expect(Object.keys({ ...values, ...unknown }).sort()).toEqual(placeholders(renderPoolerBootstrap()));
    const maxConnections = optimizedReadsSizing(INSTANCE_CLASS_CATALOG.find((s) => s.instanceClass === 'db.r6gd.xlarge')!).maxConnections;
    expect(values).toEqual(
      expect.objectContaining({
        DatabaseName: 'app',
        ServerUser: 'apk_pooler_reader',
        Hosts: '2',
        Vcpus: '2',
        MaxConnections: String(maxConnections),
        MaxConnectionsPercent: '100',
        MaxIdleConnectionsPercent: '50',
        BorrowTimeoutSeconds: '120',
        MaxClientConnections: '1000',
        TcpIdleTimeoutSeconds: '350',
        PackagesBucket: 'aurora-proxy-kit-packages',
        PackagesKey: 'pgbouncer/packages.tar',
      }),
    );
    // Known only after apply: the endpoints and the secrets the plan creates.
    for (const name of ['ClusterEndpoint', 'ReaderEndpoints', 'ServerSecretArn', 'ConsumerSecretArns']) expect([name, unknown[name]]).toEqual([name, true]);
  });

  test('templatefile renders the template exactly as Fn::Sub does: every placeholder replaced, every other byte kept', () => {
    // GIVEN the values of a fleet, every one known
    const values = Object.fromEntries(placeholders(renderPoolerBootstrap()).map((name, i) => [name, `value-${i}-of-${name}`]));
    values.ReaderEndpoints = 'r1.example.internal r2.example.internal';
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tf-templatefile-'));
    fs.writeFileSync(path.join(work, 'main.tf'), `variable "v" {\n  type = map(string)\n}\n\noutput "rendered" {\n  value = templatefile(${JSON.stringify(TEMPLATE)}, var.v)\n}\n`);
    fs.writeFileSync(path.join(work, 'terraform.tfvars.json'), JSON.stringify({ v: values }));
    const render = new TerraformDir(work);
    try {
      // WHEN Terraform renders it
      const rendered = render.planJson().output_changes!.rendered.after;
      // THEN
      expect(rendered).toBe(substitutePlaceholders(renderPoolerBootstrap(), values));
    } finally {
      render.dispose();
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);

  test('the host role reads exactly its secrets and the packages object, with Session Manager', () => {
    const policy = plan.resource_changes.find((r) => r.address === 'module.pooler.data.aws_iam_policy_document.host')!;
    const statements = (policy.change.after as { statement: Array<{ actions: string[]; resources: unknown }> }).statement;
    expect(statements.map((s) => s.actions)).toEqual([['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'], ['s3:GetObject']]);
    expect(statements[1]!.resources).toEqual(['arn:aws:s3:::aurora-proxy-kit-packages/pgbouncer/packages.tar']);
    expect(after('aws_iam_role_policy_attachment.ssm')).toEqual(expect.objectContaining({ policy_arn: 'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore' }));
  });

  test('an internal NLB with its own security group, cross-zone, a TCP listener per role with the idle timeout, to PgBouncer\'s ports', () => {
    expect(after('aws_lb.this')).toEqual(expect.objectContaining({ internal: true, load_balancer_type: 'network', enable_cross_zone_load_balancing: true }));
    expect(changes('aws_lb_listener').map((r) => [r.change.after!.port, r.change.after!.protocol, r.change.after!.tcp_idle_timeout_seconds]).sort()).toEqual([
      [5432, 'TCP', 350],
      [5433, 'TCP', 350],
    ]);
    expect(changes('aws_lb_target_group').map((r) => [r.change.after!.port, r.change.after!.deregistration_delay, (r.change.after!.health_check as Array<{ protocol: string }>)[0]!.protocol]).sort()).toEqual([
      [6432, '30', 'TCP'],
      [6433, '30', 'TCP'],
    ]);
    expect(changes('aws_vpc_security_group_ingress_rule').filter((r) => r.address.includes('hosts_from_load_balancer')).map((r) => r.change.after!.from_port).sort()).toEqual([6432, 6433]);
  });

  test('PrivateLink: an endpoint service for this account, an interface endpoint with its own security group per consumer endpoint', () => {
    expect(after('aws_vpc_endpoint_service.this')).toEqual(expect.objectContaining({ acceptance_required: false }));
    expect(changes('aws_vpc_endpoint').map((r) => [r.address, r.change.after!.vpc_endpoint_type, r.change.after!.private_dns_enabled])).toEqual([
      ['module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-ro"]', 'Interface', false],
      ['module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-rw"]', 'Interface', false],
    ]);
    expect(changes('aws_security_group').filter((r) => r.address.includes('endpoint')).length).toBe(2);
    expect(plan.output_changes!.endpoints.after).toEqual({
      'apk-pgbouncer-ro': expect.objectContaining({ port: 5433, role: 'READ_ONLY' }),
      'apk-pgbouncer-rw': expect.objectContaining({ port: 5432, role: 'READ_WRITE' }),
    });
  });

  test('a secret with a generated password for the server role and each consumer user', () => {
    expect(changes('aws_secretsmanager_secret').map((r) => r.address).sort()).toEqual([
      'module.pooler.aws_secretsmanager_secret.consumer["app_reader"]',
      'module.pooler.aws_secretsmanager_secret.consumer["app_writer"]',
      'module.pooler.aws_secretsmanager_secret.server',
    ]);
    const passwords = dataSources().filter((d) => d.type === 'aws_secretsmanager_random_password');
    expect(passwords.map((d) => d.values)).toEqual(Array(3).fill(expect.objectContaining({ password_length: 32, exclude_punctuation: true })));
  });
});
