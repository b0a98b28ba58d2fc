import * as fs from 'fs';
import * as path from 'path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { allowLogsToUseKey, stackLogGroupPattern } from '../../lib/private/key-policies';
import { LambdaConsumer, LambdaConsumerProps } from '../../lib/lambda-consumer';
import { LAMBDA_SOURCE_DIR } from '../../lib/private/handler-function';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { RdsProxy } from '../../lib/rds-proxy';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { BUNDLING, getAtt, isolatedSubnetRefs, isolatedVpc, kitError, logicalIdOf, newStack, ref } from '../helpers/cdk';
import { rejectionMessage } from '../helpers/vectors';
import { requestProblems } from '../../lambda/src/role-bootstrap-request';
import { FUNCTION_RULES, runRules } from '../../lib/model';
import { ApiRoutes } from '../../lib/vpc-api-routes';
import { ConnectionMode, EndpointRole } from '../../lambda/src/environment';

function dataPath(stack: Stack) {
  const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc, readers: 1 });
  const proxy = new RdsProxy(stack, 'Proxy', { cluster });
  const readOnly = proxy.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc }) as RdsProxyEndpoint;
  const readWrite = proxy.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc }) as RdsProxyEndpoint;
  return { dataVpc, consumerVpc, cluster, proxy, readOnly, readWrite };
}

/** The source files an esbuild bundle was built from, read from its source map. */
function bundledSources(app: App, template: Template, fn: LambdaConsumer): string[] {
  const code = template.findResources('AWS::Lambda::Function')[logicalIdOf(fn.function)].Properties.Code;
  const assetHash = String(code.S3Key).replace(/\.zip$/, '');
  const map = JSON.parse(fs.readFileSync(path.join(app.outdir, `asset.${assetHash}`, 'index.js.map'), 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.resolve(app.outdir, `asset.${assetHash}`, s));
}

describe('LambdaConsumer', () => {
  let app: App;
  let stack: Stack;
  let net: ReturnType<typeof dataPath>;
  let reader: LambdaConsumer;
  let writer: LambdaConsumer;
  let template: Template;
  let functions: ReturnType<Template['findResources']>;

  beforeAll(() => {
    // GIVEN (one stack, two bundles, for the whole file)
    ({ app, stack } = newStack('Stack', BUNDLING));
    net = dataPath(stack);
    // WHEN
    reader = new LambdaConsumer(stack, 'Reader', { endpoint: net.readOnly, dbUser: 'app_reader', databaseName: 'app' });
    writer = new LambdaConsumer(stack, 'Writer', {
      endpoint: net.readWrite,
      dbUser: 'app_writer',
      databaseName: 'orders',
      connectionMode: ConnectionMode.PER_INVOCATION,
      memorySize: 1024,
      timeout: Duration.seconds(60),
      reservedConcurrentExecutions: 5,
      logRetention: logs.RetentionDays.ONE_WEEK,
    });
    template = Template.fromStack(stack);
    functions = template.findResources('AWS::Lambda::Function');
  });

  const props = (fn: LambdaConsumer) => functions[logicalIdOf(fn.function)].Properties;

  test('Node.js 24 on arm64, tracing active, environment encrypted with its key', () => {
    for (const fn of [reader, writer]) {
      expect(props(fn)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        KmsKeyArn: getAtt(fn.node.findChild('Key'), 'Arn'),
      });
    }
  });

  test('memory, timeout and reserved concurrency: defaults, and overrides', () => {
    expect(props(reader)).toMatchObject({ MemorySize: 512, Timeout: 30 });
    expect(props(reader).ReservedConcurrentExecutions).toBeUndefined();
    expect(props(writer)).toMatchObject({ MemorySize: 1024, Timeout: 60, ReservedConcurrentExecutions: 5 });
  });

  test('placed in the endpoint\'s (consumer) VPC, not the data VPC, with a security group of its own', () => {
    for (const fn of [reader, writer]) {
      // GIVEN
      const vpcConfig = props(fn).VpcConfig;
      // THEN
      expect(vpcConfig.SubnetIds).toEqual(isolatedSubnetRefs(net.consumerVpc));
      for (const subnet of isolatedSubnetRefs(net.dataVpc)) expect(vpcConfig.SubnetIds).not.toContainEqual(subnet);
      expect(vpcConfig.SecurityGroupIds).toEqual([getAtt(fn.connections.securityGroups[0], 'GroupId')]);
      const sg = template.findResources('AWS::EC2::SecurityGroup')[logicalIdOf(fn.connections.securityGroups[0])];
      expect(sg.Properties.VpcId).toEqual(ref(net.consumerVpc));
    }
  });

  test('environment: the endpoint host and role, IAM auth, verified TLS, connection mode', () => {
    expect(props(reader).Environment.Variables).toEqual({
      DB_HOST: getAtt(net.readOnly.endpoint, 'Endpoint'),
      DB_PORT: '5432',
      DB_NAME: 'app',
      DB_USER: 'app_reader',
      DB_AUTH: 'iam',
      DB_TLS: 'verify-proxy-domain',
      DB_TLS_SERVER_NAME: getAtt(net.proxy.proxy, 'Endpoint'),
      DB_ENDPOINT_ROLE: 'READ_ONLY',
      CONNECTION_MODE: 'reuse',
      POWERTOOLS_SERVICE_NAME: 'aurora-proxy-kit',
    });
    expect(props(writer).Environment.Variables).toMatchObject({
      DB_HOST: getAtt(net.readWrite.endpoint, 'Endpoint'),
      DB_NAME: 'orders',
      DB_USER: 'app_writer',
      DB_ENDPOINT_ROLE: 'READ_WRITE',
      CONNECTION_MODE: 'per-invocation',
    });
  });

  test('TLS to a custom endpoint: the certificate is checked against the proxy\'s default endpoint, never verify-full', () => {
    // RDS Proxy's wildcard certificate names the default endpoint only (VERIFY_IDENTITY works there only).
    for (const fn of [reader, writer]) {
      expect(props(fn).Environment.Variables).toMatchObject({
        DB_TLS: 'verify-proxy-domain',
        DB_TLS_SERVER_NAME: getAtt(net.proxy.proxy, 'Endpoint'),
      });
    }
  });

  test('logs go to its own log group, with retention and the key', () => {
    expect(props(reader).LoggingConfig).toEqual({ LogGroup: ref(reader.logGroup) });
    expect(props(writer).LoggingConfig).toEqual({ LogGroup: ref(writer.logGroup) });
    const groups = template.findResources('AWS::Logs::LogGroup');
    expect(groups[logicalIdOf(reader.logGroup)].Properties).toMatchObject({ RetentionInDays: 30, KmsKeyId: getAtt(reader.node.findChild('Key'), 'Arn') });
    expect(groups[logicalIdOf(writer.logGroup)].Properties).toMatchObject({ RetentionInDays: 7, KmsKeyId: getAtt(writer.node.findChild('Key'), 'Arn') });
  });

  test('its key is rotated and lets CloudWatch Logs use it', () => {
    const key = template.findResources('AWS::KMS::Key')[logicalIdOf(reader.node.findChild('Key'))].Properties;
    expect(key.EnableKeyRotation).toBe(true);
    expect(JSON.stringify(key.KeyPolicy)).toContain('"logs.",{"Ref":"AWS::Region"},".amazonaws.com"');
  });

  test('rds-db:connect for its own database user through the proxy', () => {
    // GIVEN
    const statements = new Capture();
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [ref(reader.function.role!)],
      PolicyDocument: { Statement: statements },
    });
    // THEN
    const connect = (statements.asArray() as Array<{ Action: string; Resource: unknown }>).filter((s) => s.Action === 'rds-db:connect');
    expect(connect).toHaveLength(1);
    expect(JSON.stringify(connect[0].Resource)).toContain('"/app_reader"');
    expect(JSON.stringify(connect[0].Resource)).toContain(JSON.stringify(getAtt(net.proxy.proxy, 'DBProxyArn')));
  });

  test('network: endpoint ingress from the function, function egress only to its endpoint', () => {
    for (const [fn, endpoint] of [
      [reader, net.readOnly],
      [writer, net.readWrite],
    ] as Array<[LambdaConsumer, RdsProxyEndpoint]>) {
      const fnSg = getAtt(fn.connections.securityGroups[0], 'GroupId');
      const endpointSg = getAtt(endpoint.securityGroup, 'GroupId');
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        GroupId: endpointSg,
        SourceSecurityGroupId: fnSg,
        FromPort: 5432,
        ToPort: 5432,
      });
      const egress = Object.values(template.findResources('AWS::EC2::SecurityGroupEgress', { Properties: { GroupId: fnSg } }));
      expect(egress.length).toBeGreaterThan(0);
      for (const rule of egress) {
        expect(rule.Properties).toMatchObject({ DestinationSecurityGroupId: endpointSg, FromPort: 5432, ToPort: 5432 });
      }
      const sg = template.findResources('AWS::EC2::SecurityGroup')[logicalIdOf(fn.connections.securityGroups[0])];
      expect(JSON.stringify(sg)).not.toContain('0.0.0.0/0');
    }
  });

  test('the READ_ONLY consumer bundles read-handler.ts, the READ_WRITE one write-handler.ts', () => {
    // GIVEN
    const readHandler = path.join(LAMBDA_SOURCE_DIR, 'read-handler.ts');
    const writeHandler = path.join(LAMBDA_SOURCE_DIR, 'write-handler.ts');
    // WHEN
    const readerSources = bundledSources(app, template, reader);
    const writerSources = bundledSources(app, template, writer);
    // THEN
    expect(readerSources).toContain(readHandler);
    expect(readerSources).not.toContain(writeHandler);
    expect(writerSources).toContain(writeHandler);
    expect(writerSources).not.toContain(readHandler);
    // pg and the RDS signer are bundled (only pg-native is left out).
    expect(readerSources.some((s) => s.includes(`${path.sep}node_modules${path.sep}pg${path.sep}`))).toBe(true);
    expect(readerSources.some((s) => s.includes('rds-signer'))).toBe(true);
  });

  test('metrics are AWS/Lambda metrics of the function', () => {
    const duration = reader.metricDuration();
    expect(duration.namespace).toBe('AWS/Lambda');
    expect(duration.statistic).toBe('p99');
    expect(stack.resolve(duration.dimensions)).toEqual({ FunctionName: ref(reader.function) });
    expect(reader.metricErrors().statistic).toBe('Sum');
    expect(reader.metricThrottles().metricName).toBe('Throttles');
    expect(reader.metricInvocations().metricName).toBe('Invocations');
  });
});

describe('LambdaConsumer validation', () => {
  function build(props: Partial<LambdaConsumerProps>) {
    return () => {
      const { stack } = newStack();
      const { readOnly } = dataPath(stack);
      // Validation runs before anything is bundled.
      return new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app', ...props });
    };
  }

  test.each([127, 10241])('memorySize %s', (memorySize) => {
    expect(build({ memorySize })).toThrow(kitError('Stack/Reader', rejectionMessage('memory-size', { memorySizeMb: memorySize })));
  });

  test.each([0, 901])('timeout of %s s', (seconds) => {
    expect(build({ timeout: Duration.seconds(seconds) })).toThrow(kitError('Stack/Reader', rejectionMessage('timeout', { timeoutSeconds: seconds })));
  });

  test('timeout of 16 minutes names the value in seconds', () => {
    expect(build({ timeout: Duration.minutes(16) })).toThrow(
      kitError('Stack/Reader', 'timeout 960 is out of range: a Lambda function runs at most 15 minutes (an integer from 1 to 900)'),
    );
  });

  test('a connectionMode from plain JavaScript that is not a mode', () => {
    expect(build({ connectionMode: 'pooled' as LambdaConsumerProps['connectionMode'] })).toThrow(
      kitError('Stack/Reader', rejectionMessage('connection-mode', { connectionMode: 'pooled' })),
    );
  });

  test.each([0, 901])('reservedConcurrentExecutions %s', (reservedConcurrentExecutions) => {
    expect(build({ reservedConcurrentExecutions })).toThrow(
      kitError('Stack/Reader', rejectionMessage('reserved-concurrency', { reservedConcurrentExecutions: reservedConcurrentExecutions })),
    );
  });

  test.each(['Report-Reader', 'rds_reader', 'pg_monitor'])('GIVEN dbUser %s, which the role bootstrap refuses WHEN the consumer is built THEN synth fails naming it and the fix', (dbUser) => {
    expect(build({ dbUser })).toThrow(kitError('Stack/Reader', rejectionMessage('consumer-db-user', { dbUser })));
  });

  test('GIVEN role names WHEN the consumer\'s rule and the role bootstrap\'s own check judge them THEN they agree', () => {
    for (const name of ['report_reader', '_x', 'Report-Reader', 'rds_reader', 'rdsadmin', 'pg_monitor', '1reader', 'a'.repeat(63), 'a'.repeat(64)]) {
      const bootstrapRefuses = requestProblems({ database: 'app', roles: [{ name, access: EndpointRole.READ_ONLY }] }).length > 0;
      expect([name, runRules(FUNCTION_RULES, { dbUser: name }).length > 0]).toEqual([name, bootstrapRefuses]);
    }
  });

  test('all violations at once', () => {
    expect(build({ memorySize: 64, timeout: Duration.seconds(901), reservedConcurrentExecutions: 0 })).toThrow(
      kitError(
        'Stack/Reader',
        'memorySize 64 is out of range: Lambda memory is 128 MB to 10,240 MB (an integer from 128 to 10240)',
        rejectionMessage('timeout', { timeoutSeconds: 901 }),
        rejectionMessage('reserved-concurrency', { reservedConcurrentExecutions: 0 }),
      ),
    );
  });
});

describe('LambdaConsumer with a shared key', () => {
  test('uses the given key for the environment and the log group', () => {
    // GIVEN
    const { stack } = newStack();
    const { readOnly } = dataPath(stack);
    const key = new kms.Key(stack, 'SharedKey', { enableKeyRotation: true });
    allowLogsToUseKey(key, [stackLogGroupPattern(stack)]);
    // WHEN
    const fn = new LambdaConsumer(stack, 'Reader', {
      endpoint: readOnly,
      dbUser: 'app_reader',
      databaseName: 'app',
      encryptionKey: key,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
    });
    // THEN
    expect(fn.node.tryFindChild('Key')).toBeUndefined();
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Lambda::Function', { KmsKeyArn: getAtt(key, 'Arn') });
    template.hasResourceProperties('AWS::Logs::LogGroup', { KmsKeyId: getAtt(key, 'Arn'), RetentionInDays: 30 });
    template.resourceCountIs('AWS::KMS::Key', 2); // the cluster's and the shared one
  });
});

describe('LambdaConsumer on a PgBouncer engine endpoint', () => {
  test('GIVEN a read-only PgBouncerProxyEndpoint and a Secrets Manager endpoint WHEN a consumer is added THEN it logs in with its user\'s secret over verify-full against the proxy\'s CA only, on the listener\'s port, with egress to the endpoint and Secrets Manager only', () => {
    // GIVEN
    const { stack } = newStack();
    const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
    const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc, readers: 1 });
    const pooler = new PgBouncerProxy(stack, 'Pooler', {
      cluster,
      packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' },
    });
    const readOnly = pooler.addEndpoint('ReadOnly', { vpc: consumerVpc, role: EndpointRole.READ_ONLY });
    const secretsSg = new ec2.SecurityGroup(stack, 'SecretsSg', { vpc: consumerVpc, allowAllOutbound: false });
    const secrets = consumerVpc.addInterfaceEndpoint('Secrets', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER, open: false, securityGroups: [secretsSg] });

    // WHEN
    const reader = new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app', apiRoutes: ApiRoutes.BRING_YOUR_OWN, vpcEndpoints: { secretsManager: secrets } });
    const template = Template.fromStack(stack);

    // THEN the user was added to the hosts (its secret exists) and the function reads only that secret
    expect(pooler.consumerUsers).toEqual(['app_reader']);
    const secret = pooler.consumerUserSecret('app_reader') as secretsmanager.Secret;
    const env = (template.toJSON().Resources[logicalIdOf(reader.function)].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({
      DB_PORT: '5433',
      DB_USER: 'app_reader',
      DB_AUTH: 'secret',
      DB_SECRET_ARN: ref(secret),
      DB_TLS: 'verify-full',
      DB_ENDPOINT_ROLE: 'READ_ONLY',
    });
    expect(env.DB_TLS_CA).toEqual(stack.resolve(pooler.clientCaCertificate));
    expect(env).not.toHaveProperty('DB_TLS_SERVER_NAME');
    expect(env).not.toHaveProperty('DB_PASSWORD');
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [ref(reader.function.role!.node.defaultChild as iam.CfnRole)],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], Resource: ref(secret) })]) },
    });
    // Egress: the endpoint's listener port and Secrets Manager's HTTPS, nothing else
    const egress = template.findResources('AWS::EC2::SecurityGroupEgress', { Properties: { GroupId: getAtt(reader.connections.securityGroups[0].node.defaultChild as ec2.CfnSecurityGroup, 'GroupId') } });
    expect(Object.values(egress).map((r) => [r.Properties.FromPort, r.Properties.DestinationSecurityGroupId]).sort()).toEqual([
      [443, getAtt(secretsSg.node.defaultChild as ec2.CfnSecurityGroup, 'GroupId')],
      [5433, getAtt(readOnly.securityGroup.node.defaultChild as ec2.CfnSecurityGroup, 'GroupId')],
    ]);
  });
});
