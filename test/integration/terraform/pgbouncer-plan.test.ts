import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { INSTANCE_CLASS_CATALOG, optimizedReadsSizing } from '../../../lib/model';
import { renderPoolerBootstrap, substitutePlaceholders } from '../../../lib/model/pgbouncer-bootstrap';
import { FLEET_HOST_HEALTH_CHECK_TYPE, FLEET_HOST_WARMUP_SECONDS } from '../../../lib/model/pgbouncer-fleet';
import { FLEET_HOST_SIGNAL_TIMEOUT_SECONDS } from '../../../lib/model/pgbouncer-rollout';
import { SESSION_MANAGER_INSTANCE_POLICY } from '../../../lib/model/pgbouncer-hosts';
import { POOLER_HEALTH_CHECK, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../../../lib/model/pgbouncer-host-serve';
import { POOLER_METRICS_NAMESPACE } from '../../../lib/model/pgbouncer-metrics';
import { topologyFromPlan } from '../../../lib/rehearsal';
import type { PlanOfResources, ResourceChange } from '../../../lib/terraform/plan-json';
import { EXAMPLE_POOLER_IMAGE_ID, ROOT, TerraformDir } from '../../terraform/terraform-cli';

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
  let plan: PlanOfResources;
  let pooler: Array<{ address: string; expressions: Record<string, unknown> }>;
  const changes = (type: string): ResourceChange[] => plan.resource_changes.filter((r) => r.type === type && r.address.startsWith('module.pooler.') && r.mode === 'managed');
  /** The data sources read at plan (known inputs): they are in the prior state, not in resource_changes. */
  const dataSources = (): Array<{ address: string; type: string; values: Record<string, unknown> }> =>
    ((plan as unknown as { prior_state?: { values?: { root_module?: { child_modules?: Array<{ resources?: Array<{ address: string; type: string; mode: string; values: Record<string, unknown> }> }> } } } }).prior_state?.values?.root_module?.child_modules ?? [])
      .flatMap((m) => m.resources ?? [])
      .filter((r) => r.mode === 'data');
  const after = (address: string): Record<string, unknown> => plan.resource_changes.find((r) => r.address === `module.pooler.${address}`)!.change.after!;

  beforeAll(() => {
    // GIVEN the example with its defaults, and the release's zips it deploys
    dir = new TerraformDir(path.join(ROOT, 'modules/examples/complete-pgbouncer'));
    // WHEN it is planned
    plan = dir.planJson();
    pooler = (plan.configuration.root_module as unknown as { module_calls: Record<string, { module: { resources: typeof pooler } }> }).module_calls.pooler.module.resources;
  }, 300_000);

  afterAll(() => dir?.dispose());

  test('the template file is the model\'s bootstrap, byte for byte', () => {
    expect(fs.readFileSync(TEMPLATE, 'utf8')).toBe(renderPoolerBootstrap());
  });

  test('the hosts: a fixed-size group of two on a pinned launch template version, the apply waiting for both to serve, refreshed one host at a time', () => {
    expect(changes('aws_autoscaling_group').map((r) => r.change.after)).toEqual([
      expect.objectContaining({
        min_size: 2,
        max_size: 2,
        desired_capacity: 2,
        health_check_type: FLEET_HOST_HEALTH_CHECK_TYPE,
        health_check_grace_period: FLEET_HOST_WARMUP_SECONDS,
        // No signals in Terraform: every host healthy in both target groups (both listeners serve), within CloudFormation's signal timeout.
        wait_for_elb_capacity: 2,
        wait_for_capacity_timeout: `${FLEET_HOST_SIGNAL_TIMEOUT_SECONDS}s`,
        instance_refresh: [expect.objectContaining({ strategy: 'Rolling', preferences: [expect.objectContaining({ min_healthy_percentage: 50, max_healthy_percentage: 100, instance_warmup: String(FLEET_HOST_WARMUP_SECONDS), skip_matching: true, auto_rollback: true })] })],
      }),
    ]);
    const asg = pooler.find((r) => r.address === 'aws_autoscaling_group.this')!;
    expect(JSON.stringify(asg.expressions.launch_template)).toContain('aws_launch_template.this.latest_version');
  });

  test('the launch template: the AMI the deployer pinned (no parameter read at plan), IMDSv2 only, encrypted gp3 root, no public address, no key pair', () => {
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
    expect(lt.image_id).toBe(EXAMPLE_POOLER_IMAGE_ID);
    expect(dataSources().filter((d) => d.type === 'aws_ssm_parameter')).toEqual([]);
    expect(JSON.stringify(pooler.find((r) => r.address === 'aws_launch_template.this')!.expressions.image_id)).toContain('var.image_id');
  });

  test('the user data is base64 of templatefile of the bootstrap with a value for every placeholder, the CDK construct\'s values', () => {
    const lt = pooler.find((r) => r.address === 'aws_launch_template.this')!;
    // base64 of local.user_data, which is the template with the placeholders' values (the plan shows no locals: read the source)
    expect(JSON.stringify(lt.expressions.user_data)).toMatch(/local\.user_data/);
    expect(fs.readFileSync(path.join(ROOT, 'modules/pgbouncer-proxy/main.tf'), 'utf8')).toMatch(/\n {2}user_data = templatefile\("\$\{path\.module\}\/templates\/bootstrap\.sh\.tftpl", local\.bootstrap_variables\)\n/);
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
        MaxIdleConnectionsPercent: '5',
        BorrowTimeoutSeconds: '120',
        MaxClientConnections: '1000',
        TcpIdleTimeoutSeconds: '350',
        PackagesBucket: 'aurora-proxy-kit-packages',
        PackagesKey: 'pgbouncer/packages.tar',
        // The module's name is the fleet's name, the Fleet dimension of its metrics.
        FleetName: 'apk-pgbouncer',
        // No stack to signal: the hosts send none.
        SignalStack: '',
        SignalResource: '',
        SignalRegion: '',
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

  // session-manager-minimal-instance-permissions: no AmazonSSMManagedInstanceCore, which reads every SSM parameter.
  test('the host role reads exactly its secrets and the packages object, publishes metrics in the engine\'s namespace only, with Session Manager\'s minimal actions and no managed policy', () => {
    const policy = plan.resource_changes.find((r) => r.address === 'module.pooler.data.aws_iam_policy_document.host')!;
    const statements = (policy.change.after as { statement: Array<{ actions: string[]; resources: unknown; condition?: unknown }> }).statement;
    expect(statements.map((s) => s.actions)).toEqual([
      [...SESSION_MANAGER_INSTANCE_POLICY.actions].sort(),
      ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
      ['s3:GetObject'],
      ['cloudwatch:PutMetricData'],
    ]);
    expect(statements[0]!.resources).toEqual(['*']);
    expect(statements[2]!.resources).toEqual(['arn:aws:s3:::aurora-proxy-kit-packages/pgbouncer/packages.tar']);
    expect([statements[3]!.resources, statements[3]!.condition]).toEqual([['*'], [{ test: 'StringEquals', variable: 'cloudwatch:namespace', values: [POOLER_METRICS_NAMESPACE] }]]);
    // The only managed policy of the module: the certificate function's logging role's (outside any VPC: no VPC access policy).
    expect(changes('aws_iam_role_policy_attachment').map((r) => [r.address, r.change.after!.policy_arn])).toEqual([['module.pooler.module.certificate_function[0].aws_iam_role_policy_attachment.basic', 'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']]);
  });

  test('an internal NLB with its own security group, cross-zone, a TCP listener per role with the idle timeout, to PgBouncer\'s ports, checked on the hosts\' health endpoint as the CDK construct checks them', () => {
    expect(after('aws_lb.this')).toEqual(expect.objectContaining({ internal: true, load_balancer_type: 'network', enable_cross_zone_load_balancing: true }));
    expect(changes('aws_lb_listener').map((r) => [r.change.after!.port, r.change.after!.protocol, r.change.after!.tcp_idle_timeout_seconds]).sort()).toEqual([
      [5432, 'TCP', 350],
      [5433, 'TCP', 350],
    ]);
    const check = (path: string) => ({ protocol: 'HTTP', port: String(POOLER_HEALTH_PORT), path, matcher: '200', interval: POOLER_HEALTH_CHECK.intervalSeconds, timeout: POOLER_HEALTH_CHECK.timeoutSeconds, healthy_threshold: POOLER_HEALTH_CHECK.healthyThreshold, unhealthy_threshold: POOLER_HEALTH_CHECK.unhealthyThreshold });
    expect(changes('aws_lb_target_group').map((r) => [r.change.after!.port, r.change.after!.protocol, r.change.after!.deregistration_delay, (r.change.after!.health_check as Array<Record<string, unknown>>)[0]]).sort()).toEqual([
      [6432, 'TCP', '30', expect.objectContaining(check(POOLER_HEALTH_PATHS.readWrite))],
      [6433, 'TCP', '30', expect.objectContaining(check(POOLER_HEALTH_PATHS.readOnly))],
    ]);
    expect(changes('aws_vpc_security_group_ingress_rule').filter((r) => r.address.includes('hosts_from_load_balancer')).map((r) => r.change.after!.from_port).sort()).toEqual([6432, 6433]);
    expect(after('aws_vpc_security_group_ingress_rule.hosts_health_from_load_balancer')).toEqual(expect.objectContaining({ from_port: POOLER_HEALTH_PORT, to_port: POOLER_HEALTH_PORT, ip_protocol: 'tcp' }));
    expect(after('aws_vpc_security_group_egress_rule.load_balancer_to_hosts_health')).toEqual(expect.objectContaining({ from_port: POOLER_HEALTH_PORT, to_port: POOLER_HEALTH_PORT, ip_protocol: 'tcp' }));
  });

  test('target groups: a generated name from a prefix ELB takes (at most 6 characters) and create_before_destroy, so a change that replaces one does not collide with its name or its listener', () => {
    const groups = changes('aws_lb_target_group');
    expect(groups.map((g) => [g.address, g.change.after!.name_prefix, g.change.after!.name, (g.change.after_unknown as Record<string, unknown>).name, (g.change.after!.tags as Record<string, string>).Name])).toEqual([
      ['module.pooler.aws_lb_target_group.this["READ_ONLY"]', 'ro-', undefined, true, 'apk-pgbouncer-ro'],
      ['module.pooler.aws_lb_target_group.this["READ_WRITE"]', 'rw-', undefined, true, 'apk-pgbouncer-rw'],
    ]);
    for (const g of groups) expect(String(g.change.after!.name_prefix).length).toBeLessThanOrEqual(6);
    // The module's block: the stand-in provider plans no replacements, so the lifecycle is read where it is written.
    const block = /^resource "aws_lb_target_group" "this" \{\n([\s\S]*?)^\}/m.exec(fs.readFileSync(path.join(ROOT, 'modules/pgbouncer-proxy/main.tf'), 'utf8'))![1]!;
    expect(block).toMatch(/^ {2}lifecycle \{\n {4}create_before_destroy = true\n {2}\}$/m);
    expect(block).not.toMatch(/^ {2}name\s*=/m);
  });

  test('PrivateLink: an endpoint service for this account, an interface endpoint with its own security group per consumer endpoint', () => {
    expect(after('aws_vpc_endpoint_service.this')).toEqual(expect.objectContaining({ acceptance_required: false }));
    expect(changes('aws_vpc_endpoint').map((r) => [r.address, r.change.after!.vpc_endpoint_type, r.change.after!.private_dns_enabled])).toEqual([
      ['module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-ro"]', 'Interface', false],
      ['module.pooler.aws_vpc_endpoint.this["apk-pgbouncer-rw"]', 'Interface', false],
    ]);
    expect(changes('aws_security_group').filter((r) => r.address.includes('endpoint')).length).toBe(2);
    expect(plan.output_changes!.endpoints.after).toEqual({
      'apk-pgbouncer-ro': expect.objectContaining({ port: 5433, target_role: 'READ_ONLY' }),
      'apk-pgbouncer-rw': expect.objectContaining({ port: 5432, target_role: 'READ_WRITE' }),
    });
  });

  test('the consumers log in with their users\' secrets through their endpoints, trusting the listeners\' CA, and the role bootstrap gives their roles and the read-only server role those secrets\' verifiers', () => {
    const anywhere = (type: string): ResourceChange[] => plan.resource_changes.filter((r) => r.type === type && r.mode === 'managed');
    // WHEN the example's consumers are planned
    const functions = anywhere('aws_lambda_function').filter((r) => r.address.startsWith('module.consumer['));
    // THEN
    expect(functions.map((r) => r.address).sort()).toEqual(['module.consumer["reader"].module.function.aws_lambda_function.this', 'module.consumer["writer"].module.function.aws_lambda_function.this']);
    for (const fn of functions) {
      const env = (fn.change.after!.environment as Array<{ variables: Record<string, string> }>)[0].variables;
      const reader = fn.address.includes('reader');
      expect(env).toEqual(expect.objectContaining({ DB_AUTH: 'secret', DB_TLS: 'verify-full', DB_PORT: reader ? '5433' : '5432', DB_USER: reader ? 'app_reader' : 'app_writer', DB_ENDPOINT_ROLE: reader ? 'READ_ONLY' : 'READ_WRITE' }));
      expect(env).not.toHaveProperty('DB_TLS_SERVER_NAME');
    }
    // the secret reads go to the consumer VPC's Secrets Manager endpoint, which admits each consumer
    expect(anywhere('aws_vpc_security_group_egress_rule').filter((r) => r.address.startsWith('module.consumer[') && r.address.endsWith('to_secrets_manager[0]')).map((r) => r.change.after!.from_port)).toEqual([443, 443]);
    expect(anywhere('aws_vpc_security_group_ingress_rule').filter((r) => r.address.startsWith('aws_vpc_security_group_ingress_rule.consumer_secrets[')).length).toBe(2);
    // the role bootstrap is asked for the two consumer roles and the read-only server role, each with its secret
    const invocation = anywhere('aws_lambda_invocation').find((r) => r.address.startsWith('module.database_roles.'))!;
    const input = invocation.change.after!.input as string | undefined;
    if (input !== undefined) {
      const roles = (JSON.parse(input) as { roles: Array<{ name: string; passwordSecretArn?: string }> }).roles;
      expect(roles.map((r) => r.name)).toEqual(['app_reader', 'app_writer', 'apk_pooler_reader']);
    }
    expect(invocation).toBeDefined();
  });

  test('the data VPC\'s S3 gateway endpoint passes only the hosts\' GetObject of the packages object (Principal "*", the host role by aws:PrincipalArn)', () => {
    // The policy's values known at plan; the host role's ARN by its reference.
    const endpoint = plan.configuration.root_module.resources.find((r) => r.address === 'aws_vpc_endpoint.s3')!;
    expect((endpoint.expressions!.policy as { references: string[] }).references).toContain('data.aws_iam_policy_document.s3_endpoint');
    const document = plan.resource_changes.find((r) => r.address === 'data.aws_iam_policy_document.s3_endpoint')!.change.after as { statement: Array<Record<string, unknown>> };
    expect(document.statement).toEqual([
      expect.objectContaining({
        effect: null,
        actions: ['s3:GetObject'],
        resources: ['arn:aws:s3:::aurora-proxy-kit-packages/pgbouncer/packages.tar'],
        principals: [{ type: '*', identifiers: ['*'] }],
        condition: [{ test: 'StringEquals', variable: 'aws:PrincipalArn', values: [null] }],
        not_actions: null,
        not_resources: null,
        not_principals: [],
      }),
    ]);
    const config = plan.configuration.root_module.resources.find((r) => r.address === 'data.aws_iam_policy_document.s3_endpoint')!.expressions as { statement: Array<{ condition: Array<{ values: { references: string[] } }> }> };
    expect(config.statement[0].condition[0].values.references).toContain('module.pooler.host_role_arn');
  });

  test('GIVEN a state from before the Secrets Manager and CloudWatch endpoints had policies THEN migrations.tf moves them and plan updates them in place', () => {
    // GIVEN the endpoints at their former addresses, instances of host_services
    const instance = (service: string) => ({ index_key: service, schema_version: 0, attributes: { id: `vpce-${service}`, service_name: `com.amazonaws.us-east-1.${service}`, vpc_endpoint_type: 'Interface' } });
    // WHEN planned against it
    const moved = dir.movesFrom([{ mode: 'managed', type: 'aws_vpc_endpoint', name: 'host_services', provider: 'provider["registry.terraform.io/hashicorp/aws"]', each: 'map', instances: [instance('secretsmanager'), instance('monitoring')] }]);
    // THEN each is moved to its own resource and updated (its policy set), not replaced
    expect(moved).toEqual([
      ['aws_vpc_endpoint.host_services["monitoring"]', 'aws_vpc_endpoint.monitoring', ['update']],
      ['aws_vpc_endpoint.host_services["secretsmanager"]', 'aws_vpc_endpoint.secrets_manager', ['update']],
    ]);
  });

  test('rehearse --from reads the plan as the engine\'s fleet, its user data the template with the values the plan knows, where the plan was made', () => {
    const fleet = topologyFromPlan(plan, 'plan.json', { dir: dir.dir, dataDir: dir.dataDir }).fleet!;
    expect(fleet.userData).toBe(fs.readFileSync(TEMPLATE, 'utf8'));
    expect(fleet.hosts).toBe(after('aws_autoscaling_group.this').desired_capacity);
    // Elsewhere (no module manifest), it says where to run it.
    expect(() => topologyFromPlan(plan, path.join(os.tmpdir(), 'plan.json'))).toThrow(/no module manifest .*modules\.json.*--terraform-dir/);
  });

  test('a secret with a generated password for the server role and each consumer user', () => {
    expect(changes('aws_secretsmanager_secret').map((r) => r.address).sort()).toEqual([
      'module.pooler.aws_secretsmanager_secret.ca[0]',
      'module.pooler.aws_secretsmanager_secret.consumer["app_reader"]',
      'module.pooler.aws_secretsmanager_secret.consumer["app_writer"]',
      'module.pooler.aws_secretsmanager_secret.server',
      'module.pooler.aws_secretsmanager_secret.tls[0]',
    ]);
    const passwords = dataSources().filter((d) => d.type === 'aws_secretsmanager_random_password');
    expect(passwords.map((d) => d.values)).toEqual(Array(3).fill(expect.objectContaining({ password_length: 32, exclude_punctuation: true })));
  });

  test('the listeners\' certificate from the module\'s CA: the release\'s zip outside any VPC, invoked for the endpoint service once it exists, before the hosts', () => {
    const fn = after('module.certificate_function[0].aws_lambda_function.this');
    expect(fn).toEqual(expect.objectContaining({ function_name: 'apk-pgbouncer-pooler-certificate', runtime: 'nodejs24.x', architectures: ['arm64'], handler: 'index.handler', tracing_config: [{ mode: 'Active' }] }));
    expect(fn.vpc_config ?? []).toEqual([]);
    expect(fn.source_code_hash).toBe(createHash('sha256').update(fs.readFileSync(path.join(ROOT, 'dist/lambda/pooler-certificate.zip'))).digest('base64'));
    const invocation = pooler.find((r) => r.address === 'aws_lambda_invocation.certificate')!;
    const input = JSON.stringify(invocation.expressions.input);
    for (const reference of ['aws_vpc_endpoint_service.this.id', 'aws_secretsmanager_secret.tls[0].arn', 'aws_secretsmanager_secret.ca[0].arn', 'var.certificate_validity_days']) expect(input).toContain(reference);
    const asg = pooler.find((r) => r.address === 'aws_autoscaling_group.this') as unknown as { depends_on?: string[] };
    // and after what the caller names (the example: the role bootstrap's run, compared with CDK in the parity test)
    expect(asg.depends_on).toEqual(['aws_lambda_invocation.certificate', 'var.hosts_depend_on']);
    // Least privilege: write the listeners' secret, keep the CA.
    const policy = plan.resource_changes.find((r) => r.address === 'module.pooler.data.aws_iam_policy_document.certificate[0]')!;
    const statements = (policy.change.after as { statement: Array<{ actions: string[] }> }).statement;
    expect(statements.map((s) => s.actions)).toEqual([['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], ['secretsmanager:PutSecretValue'], ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue']]);
    // Known after apply: the CA the consumers verify against.
    expect((plan.output_changes!.client_ca_certificate as unknown as { after_unknown: boolean }).after_unknown).toBe(true);
  });
});
