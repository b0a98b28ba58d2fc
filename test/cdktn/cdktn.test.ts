import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { synthComplete } from '../../packages/cdktn/examples/complete';
import { type KitValidationError, LambdaConsumer, PgBouncerProxy, type PgBouncerProxyProps, RdsProxy } from '../../packages/cdktn/src';
import { App, TerraformStack, Token } from './cdktn-runtime';

/**
 * The CDK Terrain flavour's constructs at construction: bad props fail with the kit's message naming the
 * prop, before anything is written. (The example apps planned beside their HCL examples are in
 * test/integration/cdktn/plan.test.ts.)
 */

describe('the kit\'s rules at construction', () => {
  const proxyProps = {
    name: 'orders',
    clusterIdentifier: 'orders',
    readers: 2,
    clusterSecurityGroupId: 'sg-cluster',
    clusterResourceId: 'cluster-ORDERS',
    vpcId: 'vpc-data',
    subnetIds: ['subnet-d1', 'subnet-d2'],
  };
  const endpoint = { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] };
  // Constructing writes nothing; the app only needs a directory it would synthesize into.
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-rules-'));
  const ordersStack = () => new TerraformStack(new App({ outdir }), 'Orders');
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  test('GIVEN readers 16 WHEN the example is synthesized THEN it throws the cluster rule\'s message naming the prop, before anything is written', () => {
    const badOutdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-bad-'));
    try {
      expect(() => synthComplete(badOutdir, { readers: 16 })).toThrow(
        'complete/database: readers 16 is out of range: Aurora allows up to 15 readers per cluster (an integer from 0 to 15)',
      );
      expect(fs.existsSync(path.join(badOutdir, 'stacks', 'complete', 'cdk.tf.json'))).toBe(false);
    } finally {
      fs.rmSync(badOutdir, { recursive: true, force: true });
    }
  });

  test('GIVEN maxConnectionsPercent 150 THEN RdsProxy throws KitValidationError with the kit\'s message', () => {
    const stack = ordersStack();
    let error: unknown;
    try {
      new RdsProxy(stack, 'Proxy', { ...proxyProps, maxConnectionsPercent: 150 });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      name: 'KitValidationError',
      constructPath: 'Orders/Proxy',
      violations: ["maxConnectionsPercent 150 is out of range: set the share of the target's max_connections the proxy may use (an integer from 1 to 100)"],
    });
  });

  test('GIVEN maxConnectionsPercent 4 and the idle share left out THEN the module\'s default (5) breaks idle <= max, as plan would', () => {
    const stack = ordersStack();
    expect(() => new RdsProxy(stack, 'Proxy', { ...proxyProps, maxConnectionsPercent: 4 })).toThrow(
      'Orders/Proxy: maxIdleConnectionsPercent 5 exceeds maxConnectionsPercent 4: set it to 4 or less',
    );
  });

  test('GIVEN bad endpoints THEN each endpoint is checked: its name, its role, a READ_ONLY one on a writer-only cluster', () => {
    const stack = ordersStack();
    expect(() =>
      new RdsProxy(stack, 'Proxy', { ...proxyProps, readers: 0, endpoints: { Reports: { ...endpoint, target_role: 'READ_WRITE' }, reports: endpoint } }),
    ).toThrow(
      [
        'Orders/Proxy: readers 0 leaves a READ_ONLY endpoint (endpoints target_role) without a target: RDS Proxy refuses READ_ONLY endpoints for a cluster with only a writer; add a reader or use a READ_WRITE endpoint',
        'Orders/Proxy: endpoints key Reports is not a valid proxy endpoint name: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
      ].join('\n'),
    );
  });

  test('GIVEN values known only at plan (tokens) THEN the rules that read them wait for Terraform, the others still run', () => {
    const stack = ordersStack();
    const unknownNumber = Token.asNumber({ resolve: () => '${var.readers}' });
    // An unknown reader count with a READ_ONLY endpoint, and an unknown endpoint map: decided at plan.
    expect(() => new RdsProxy(stack, 'A', { ...proxyProps, readers: unknownNumber, endpoints: { reports: endpoint } })).not.toThrow();
    expect(() => new RdsProxy(stack, 'B', { ...proxyProps, endpoints: Token.asAny('${var.endpoints}') })).not.toThrow();
    // A key ARN from another resource is set, though unknown: the KMS switch rule holds.
    const consumer = {
      functionName: 'reports',
      filename: 'read-handler.zip',
      vpcId: 'vpc-consumer',
      subnetIds: ['subnet-c1'],
      endpoint: Token.asAny('${module.proxy.endpoints["reports"]}'),
      connectArnPrefix: 'arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-1/',
      dbUser: 'report_reader',
      databaseName: 'app',
      createKmsKey: false,
    };
    expect(() => new LambdaConsumer(stack, 'C', { ...consumer, kmsKeyArn: Token.asString({ resolve: () => '${aws_kms_key.logs.arn}' }) })).not.toThrow();
    expect(() => new LambdaConsumer(stack, 'D', { ...consumer, memorySize: 64 })).toThrow(
      'Orders/D: memorySize 64 is out of range: Lambda memory is 128 MB to 10,240 MB (an integer from 128 to 10240)\n' +
        'Orders/D: kmsKeyArn is not set: pass kmsKeyArn when createKmsKey is false',
    );
  });

  describe('PgBouncerProxy', () => {
    const fleet = {
      name: 'orders',
      vpcId: 'vpc-data',
      subnetIds: ['subnet-d1', 'subnet-d2'],
      clusterSecurityGroupId: 'sg-cluster',
      clusterEndpoint: 'orders.cluster-abc.us-east-1.rds.amazonaws.com',
      readerEndpoints: ['orders-reader-1.abc.us-east-1.rds.amazonaws.com'],
      writerInstanceEndpoint: 'orders-writer.abc.us-east-1.rds.amazonaws.com',
      databaseName: 'app',
      maxConnections: 1000,
      imageId: 'ami-0123456789abcdef0',
      packagesBucket: 'orders-packages',
      packagesKey: 'pgbouncer/packages.tar',
      // The module's own CA, issued by the release's certificate function.
      certificateFunction: { filename: 'lambda/pooler-certificate.zip' },
      // The VPC's endpoints the hosts call AWS through.
      vpcEndpoints: { s3: 'vpce-s3', secretsmanager: 'sg-endpoints', monitoring: 'sg-endpoints', ssm: 'sg-endpoints', ssmmessages: 'sg-endpoints', ec2messages: 'sg-endpoints' },
    };
    const USER_FIX = 'use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters';
    const READERS_FIX = 'the read-only listener needs at least one reader; Aurora allows 15 (an integer from 1 to 15)';
    const unknownList = (ref: string) => Token.asList({ resolve: () => ref });
    /** The construct's violations with these props: none when it is made. */
    const violations = (props: Partial<PgBouncerProxyProps>): ReadonlyArray<string> => {
      try {
        new PgBouncerProxy(ordersStack(), 'Pooler', { ...fleet, ...props });
        return [];
      } catch (e) {
        expect(e).toMatchObject({ name: 'KitValidationError', constructPath: 'Orders/Pooler' });
        return (e as KitValidationError).violations;
      }
    };

    test('GIVEN no reader endpoints and bad user names THEN the list\'s length and each consumer user are checked, naming the props', () => {
      expect(violations({ readerEndpoints: [], readOnlyServerUser: 'Reader', consumerUsers: ['app_reader', 'App-Writer', '9lives'] })).toEqual([
        `readerEndpoints 0 is out of range: ${READERS_FIX}`,
        `readOnlyServerUser Reader is not a valid database user name: ${USER_FIX}`,
        `consumerUsers item App-Writer is not a valid database user name: ${USER_FIX}`,
        `consumerUsers item 9lives is not a valid database user name: ${USER_FIX}`,
      ]);
      expect(violations({ readerEndpoints: Array.from({ length: 16 }, (_, i) => `orders-reader-${i + 1}.abc`) })).toEqual([`readerEndpoints 16 is out of range: ${READERS_FIX}`]);
      expect(violations({ readerEndpoints: Array.from({ length: 15 }, (_, i) => `orders-reader-${i + 1}.abc`), consumerUsers: ['app_reader', 'app_writer'] })).toEqual([]);
    });

    test('GIVEN a large instance type THEN the budget split counts its vCPUs from the catalog, as the module looks them up', () => {
      expect(violations({ instanceType: 'c7g.16xlarge', hosts: 20, maxConnections: 200 })).toEqual([
        "hosts 20 x 64 processes per target need 1280 server connections of a budget of 190 (maxConnectionsPercent 100 of max_connections 200, never into the 10 connections reserved for rdsadmin, AWS's automation, the master user and the role bootstrap): use fewer hosts or a smaller instance type, or raise maxConnectionsPercent up to 100",
      ]);
      expect(violations({ instanceType: 'c7g.medium', hosts: 20, maxConnections: 200 })).toEqual([]);
    });

    test('GIVEN endpoints in session pooling THEN each pool mode is checked and the session share of the budget, as plan would', () => {
      // The elements keep the module's attribute names.
      const endpoint = { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] };
      expect(violations({ endpoints: { web: { ...endpoint, role: 'READ_WRITE' }, odd: { ...endpoint, role: 'READ_WRITE', pool_mode: 'statement' } } })).toEqual(['endpoints pool_mode statement is not a pool mode: use transaction or session']);
      // 1000 less the reserve: a budget of 990, 1% of it (9) for the session pools of 2 hosts x 8 processes.
      const small = { instanceType: 'c7g.2xlarge', sessionMaxConnectionsPercent: 1 };
      expect(violations({ ...small, endpoints: { locks: { ...endpoint, role: 'READ_ONLY', pool_mode: 'session' } } })).toEqual([
        'sessionMaxConnectionsPercent 1 splits each target\'s budget of 990 into 9 server connections for session pooling and 981 for transaction pooling, and hosts 2 x 8 processes per target need 16 in each: use fewer hosts or a smaller instance type, raise maxConnectionsPercent, or choose a sessionMaxConnectionsPercent that leaves both shares that many',
      ]);
      // The same share with no session endpoint: nothing to split.
      expect(violations({ ...small, endpoints: { web: { ...endpoint, role: 'READ_ONLY', pool_mode: 'transaction' } } })).toEqual([]);
      expect(violations({ sessionMaxConnectionsPercent: 100 })).toEqual(['sessionMaxConnectionsPercent 100 is out of range: the session pools take 1 to 99 percent of each target\'s budget, the transaction pools keep the rest (an integer from 1 to 99)']);
    });

    test('GIVEN lists known only at plan THEN their length waits for Terraform, and the users known at synth are still checked', () => {
      // The cluster module's output, and a list with an output spread into it: its length is known at plan only.
      expect(violations({ readerEndpoints: unknownList('${module.database.reader_instance_endpoints}') })).toEqual([]);
      expect(violations({ readerEndpoints: [...unknownList('${var.more_readers}'), ...Array.from({ length: 15 }, (_, i) => `orders-reader-${i + 1}.abc`)] })).toEqual([]);
      // An unknown instance type or pool share leaves the budget split to plan.
      expect(violations({ instanceType: Token.asString({ resolve: () => '${var.instance_type}' }), hosts: 20, maxConnections: 200 })).toEqual([]);
      expect(violations({ instanceType: 'c7g.16xlarge', hosts: 20, maxConnections: 200, maxConnectionsPercent: Token.asNumber({ resolve: () => '${var.pct}' }) })).toEqual([]);
      // Users from elsewhere (a spread list, an output) are checked at plan; the literal ones now.
      const users = [...unknownList('${var.users}'), Token.asString({ resolve: () => '${var.user}' }), 'Bad-User'];
      expect(violations({ consumerUsers: users })).toEqual([`consumerUsers item Bad-User is not a valid database user name: ${USER_FIX}`]);
      expect(violations({ consumerUsers: unknownList('${var.users}'), readOnlyServerUser: 'Reader' })).toEqual([`readOnlyServerUser Reader is not a valid database user name: ${USER_FIX}`]);
    });

    test('GIVEN no route to an API the hosts call THEN it names the missing ones, and subnets with egress need none', () => {
      const some = { s3: 'vpce-s3', secretsmanager: 'sg-endpoints' };
      expect(violations({ vpcEndpoints: some })).toEqual([
        'no route from the PgBouncer hosts to CloudWatch metrics (monitoring), Systems Manager (ssm), Session Manager messages (ssmmessages), EC2 messages (ec2messages): the subnets have no egress (subnetsHaveEgress) and vpcEndpoints names no VPC endpoint of them; pass the VPC\'s endpoints in vpcEndpoints (monitoring, ssm, ssmmessages, ec2messages), or subnets with a route to a NAT gateway or an internet gateway',
      ]);
      expect(violations({ vpcEndpoints: some, subnetsHaveEgress: true })).toEqual([]);
    });
  });

  test('GIVEN a prop the module does not have (from JavaScript) THEN the error names it and lists the inputs', () => {
    const stack = ordersStack();
    expect(() => new RdsProxy(stack, 'Proxy', { ...proxyProps, maxConnectionPercent: 80 } as never)).toThrow(
      /^maxConnectionPercent is not an input of modules\/rds-proxy: use one of name, clusterIdentifier, /,
    );
  });
});
