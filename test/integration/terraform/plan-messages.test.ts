import * as path from 'path';
import { DEFAULT_POOL_SETTINGS, EndpointRole, runRules } from '../../../lib/model';
import { FLEET_RULES } from '../../../lib/model/pgbouncer-fleet-rules';
import { moduleOfRule, rulesOf, terraformMessages } from '../../../lib/terraform';
import { rejectionMessage } from '../../helpers/vectors';
import { EXAMPLE_POOLER_IMAGE_ID, ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * `expect_failures` in terraform test proves which check fails, not its wording. Here the complete
 * example is planned with one bad input at a time, and the error must carry exactly the message the
 * CDK construct gives for the same input (the shared vector's message), with the module's variable
 * named where CDK names its prop: both come from the same row of lib/model.
 */
const complete = new TerraformDir(path.join(ROOT, 'modules', 'examples', 'complete'));

beforeAll(() => {
  complete.init();
});
afterAll(() => complete.dispose());

test.each([
  ['instance_class', 'db.r6g.xlarge', 'instance-class', { instanceClass: 'db.r6g.xlarge' }],
  ['instance_class', 'db.r6gd.large', 'instance-class', { instanceClass: 'db.r6gd.large' }],
  ['engine_version', '14.6', 'engine-version', { engineVersion: '14.6', instanceClass: 'db.r6gd.xlarge' }],
  ['engine_version', '13.9', 'engine-version', { engineVersion: '13.9', instanceClass: 'db.r6gd.xlarge' }],
  ['engine_version', '17.2', 'engine-version', { engineVersion: '17.2', instanceClass: 'db.r6gd.xlarge' }],
  ['max_connections_percent', '150', 'max-connections-percent', { maxConnectionsPercent: 150 }],
  ['readers', '16', 'readers', { readers: 16 }],
] as const)('%s = %s fails plan with the CDK construct\'s message', (variable, value, rule, input) => {
  const cdkMessage = rejectionMessage(rule, input);
  const [message] = terraformMessages(moduleOfRule(rule), input);
  // The same message but for the name: the module's variable where CDK names its prop.
  expect(message.startsWith(`${variable} ${value} `)).toBe(true);
  expect(message.slice(variable.length)).toBe(cdkMessage.slice(cdkMessage.indexOf(' ')));
  const errors = complete.planErrors({ [variable]: value });
  expect(errors.map((e) => e.detail.split('\n\n')[0])).toEqual([message]);
});

test('the acceptance case: db.r6g.xlarge is refused as an invalid variable value', () => {
  const errors = complete.planErrors({ instance_class: 'db.r6g.xlarge' });
  expect(errors[0].summary).toBe('Invalid value for variable');
  expect(errors[0].detail).toContain('instance_class db.r6g.xlarge has no local NVMe: Optimized Reads needs db.r6gd, db.r6id, db.r8gd (e.g. db.r6gd.xlarge)');
});

test('readers = 0 fails plan at the READ_ONLY endpoint, with the rule\'s message naming the module\'s variables', () => {
  // RDS Proxy refuses a READ_ONLY endpoint for a cluster with only a writer; the apply would fail.
  const [message] = terraformMessages('rds-proxy', { readers: 0, targetRole: 'READ_ONLY' });
  expect(message).toBe(rejectionMessage('read-only-endpoint-readers', { readers: 0, targetRole: 'READ_ONLY' }).replace('(addReadOnlyEndpoint)', '(endpoints target_role)'));
  const errors = complete.planErrors({ readers: '0' });
  expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([['Resource precondition failed', message]]);
});

describe('examples/complete-pgbouncer', () => {
  const pgbouncer = new TerraformDir(path.join(ROOT, 'modules', 'examples', 'complete-pgbouncer'));
  beforeAll(() => pgbouncer.init());
  afterAll(() => pgbouncer.dispose());

  test.each([
    ['hosts', '1', 'fleet-hosts', { hosts: 1 }],
    ['instance_type', 'c6g.large', 'pooler-instance-known', { instanceType: 'c6g.large' }],
    ['instance_type', 't3.micro', 'pooler-instance-graviton', { instanceType: 't3.micro' }],
  ] as const)('%s = %s fails plan in the PgBouncer module with the CDK construct\'s message', (variable, value, rule, input) => {
    const cdkMessage = rejectionMessage(rule, input);
    const [message] = terraformMessages(moduleOfRule(rule), input);
    expect(message.slice(variable.length)).toBe(cdkMessage.slice(cdkMessage.indexOf(' ')));
    const errors = pgbouncer.planErrors({ [variable]: value });
    expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([['Invalid value for variable', message]]);
  });
});

describe('modules/pgbouncer-proxy', () => {
  const pooler = new TerraformDir(path.join(ROOT, 'modules', 'pgbouncer-proxy'));
  const required = {
    name: 'messages',
    vpc_id: 'vpc-data',
    subnet_ids: '["subnet-d1","subnet-d2"]',
    cluster_security_group_id: 'sg-cluster',
    cluster_endpoint: 'messages.cluster-abc.us-east-1.rds.amazonaws.com',
    reader_endpoints: '["messages-reader-1.abc.us-east-1.rds.amazonaws.com"]',
    writer_instance_endpoint: 'messages-writer.abc.us-east-1.rds.amazonaws.com',
    database_name: 'app',
    image_id: EXAMPLE_POOLER_IMAGE_ID,
    packages_bucket: 'messages-packages',
    packages_key: 'pgbouncer/packages.tar',
    tls_secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:messages-tls-AbCdEf',
    // A certificate made outside the module comes with its CA.
    tls_ca_certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    // The hosts' routes to AWS's APIs (the pooler-api-route rule): the VPC's endpoints, as a user passes them.
    vpc_endpoints: '{ s3 = "vpce-s3", secretsmanager = "sg-endpoints", monitoring = "sg-endpoints", ssm = "sg-endpoints", ssmmessages = "sg-endpoints", ec2messages = "sg-endpoints" }',
  };
  beforeAll(() => pooler.init());
  afterAll(() => pooler.dispose());

  test('a fleet whose processes need more server connections than the budget fails plan at the launch template, with the CDK construct\'s message', () => {
    // GIVEN 4 hosts of 2 vCPUs (2 processes per target each) and a writer of max_connections 7
    const input = { hosts: 4, vcpusPerHost: 2, readers: 1, maxConnections: 7, pool: DEFAULT_POOL_SETTINGS, tcpIdleTimeoutSeconds: 350 };
    const [message] = terraformMessages('pgbouncer-proxy', input);
    const [cdkMessage] = runRules(FLEET_RULES, input);
    expect(message).toBe(cdkMessage.split('maxConnectionsPercent').join('max_connections_percent'));
    // WHEN
    const errors = pooler.planErrors({ ...required, hosts: '4', instance_type: 'c7g.large', max_connections: '7' });
    // THEN
    expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([['Resource precondition failed', message]]);
  });

  test('a session-pooling endpoint whose share of the budget leaves a process without a connection fails plan at the launch template, with the CDK construct\'s message', () => {
    // GIVEN 2 hosts of 8 vCPUs (16 processes per target) and 1% of a budget of 990 for the session pools: 9
    const input = { hosts: 2, vcpusPerHost: 8, readers: 1, maxConnections: 1000, pool: DEFAULT_POOL_SETTINGS, tcpIdleTimeoutSeconds: 350, sessionRoles: [EndpointRole.READ_WRITE], sessionMaxConnectionsPercent: 1 };
    const [message] = terraformMessages('pgbouncer-proxy', input);
    const [cdkMessage] = runRules(FLEET_RULES, input);
    expect(message).toBe(cdkMessage.split('sessionMaxConnectionsPercent').join('session_max_connections_percent').split('maxConnectionsPercent').join('max_connections_percent'));
    // WHEN
    const endpoints = '{ locks = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_WRITE", pool_mode = "session" } }';
    const errors = pooler.planErrors({ ...required, instance_type: 'c7g.2xlarge', max_connections: '1000', session_max_connections_percent: '1', endpoints });
    // THEN
    expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([['Resource precondition failed', message]]);
  });

  const base = { ...required, max_connections: '1000' };
  // Without tls_secret_arn and tls_ca_certificate: the module issues the listeners' certificate itself.
  const kitCertificate = Object.fromEntries(Object.entries(base).filter(([k]) => k !== 'tls_secret_arn' && k !== 'tls_ca_certificate'));
  const users = (n: number) => Array.from({ length: n }, (_, i) => `app_${i + 1}`);
  test.each([
    ['a name the load balancer cannot take', { ...base, name: 'pg_fleet' }, 'fleet-load-balancer-name', { loadBalancerName: 'pg_fleet' }, 'Invalid value for variable'],
    ['a consumer user named twice', { ...base, consumer_users: '["app_reader","app_writer","app_reader"]' }, 'pooler-consumer-users', { consumerUsers: ['app_reader', 'app_writer', 'app_reader'] }, 'Invalid value for variable'],
    ['16 consumer users', { ...base, consumer_users: JSON.stringify(users(16)) }, 'pooler-consumer-users', { consumerUsers: users(16) }, 'Invalid value for variable'],
    ['an S3 prefix list without the VPC\'s CIDR block', { ...base, s3_prefix_list_id: 'pl-63a5400a' }, 'pooler-s3-egress-vpc-cidr', { s3PrefixListId: 'pl-63a5400a' }, 'Resource precondition failed'],
    [
      'a certificate secret without its CA',
      { ...kitCertificate, tls_secret_arn: base.tls_secret_arn },
      'pooler-tls-certificate-pair',
      { tlsSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:vectors-tls', tlsCaCertificate: null },
      'Module output value precondition failed',
    ],
    [
      'a CA without the certificate secret',
      { ...kitCertificate, tls_ca_certificate: base.tls_ca_certificate, certificate_function: '{ s3_bucket = "messages-lambda", s3_key = "pooler-certificate.zip" }' },
      'pooler-tls-certificate-pair',
      { tlsSecretArn: null, tlsCaCertificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----' },
      'Module output value precondition failed',
    ],
    [
      'the module\'s own certificate with half an S3 object for its function',
      { ...kitCertificate, certificate_function: '{ s3_bucket = "messages-lambda" }' },
      'pooler-certificate-function',
      { certificateFunction: { s3_bucket: 'vectors-lambda' }, tlsSecretArn: null, tlsCaCertificate: null },
      'Resource precondition failed',
    ],
  ] as const)('GIVEN %s WHEN planned THEN it fails with the shared vector\'s message, the module\'s variables named', (_what, vars, rule, input, summary) => {
    // GIVEN the vector's message (model property names) with the module's variable in each name's place
    const names = rulesOf('pgbouncer-proxy').find((r) => r.id === rule)!.terraform.names;
    const expected = Object.entries(names)
      .sort(([a], [b]) => b.length - a.length)
      .reduce((m, [property, variable]) => m.split(property).join(variable), rejectionMessage(rule, input));
    expect(terraformMessages('pgbouncer-proxy', input)).toEqual([expected]);
    // WHEN
    const errors = pooler.planErrors(vars);
    // THEN
    expect(errors.map((e) => [e.summary, e.detail.split('\n\n')[0]])).toEqual([[summary, expected]]);
  });
});
