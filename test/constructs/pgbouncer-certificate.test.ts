import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EndpointRole } from '../../lambda/src/environment';
import { DEFAULT_SERVER_VALIDITY_DAYS } from '../../lambda/src/pooler-certificate-request';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerCertificate } from '../../lib/pgbouncer-certificate';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import type { PgBouncerProxyProps } from '../../lib/pgbouncer-proxy-props';
import { getAtt, isolatedVpc, kitError, logicalIdOf, newStack, ref } from '../helpers/cdk';

const USER_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUY2FwZW0=\n-----END CERTIFICATE-----\n';
const SERIAL_TAG = 'aurora-proxy-kit:listener-certificate-serial';

function pooler(props: Partial<PgBouncerProxyProps> = {}) {
  const { app, stack } = newStack();
  const vpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc });
  const proxy = new PgBouncerProxy(stack, 'Pooler', { cluster, packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' }, ...props });
  return { app, stack, proxy };
}

describe('PgBouncerProxy without tlsCertificate: the kit-managed CA', () => {
  let app: ReturnType<typeof pooler>['app'];
  let stack: Stack;
  let proxy: PgBouncerProxy;
  let certificate: PgBouncerCertificate;
  let template: Template;

  beforeAll(() => {
    // GIVEN a fleet with no certificate of its own
    // WHEN it is synthesized
    ({ app, stack, proxy } = pooler());
    proxy.addEndpoint('Reporting', { vpc: isolatedVpc(stack, 'ConsumerVpc', '10.30.0.0/16'), role: EndpointRole.READ_ONLY });
    certificate = proxy.certificate!;
    template = Template.fromStack(stack);
  });

  test('THEN a custom resource issues it for the endpoint service\'s names, into the secret the hosts read, keeping the CA in a second secret', () => {
    template.hasResourceProperties('Custom::PgBouncerCertificate', {
      Request: {
        serviceId: stack.resolve(proxy.endpointService.vpcEndpointServiceId),
        region: { Ref: 'AWS::Region' },
        dnsSuffix: { Ref: 'AWS::URLSuffix' },
        tlsSecretArn: ref(certificate.secret),
        caSecretArn: ref(certificate.caSecret),
        validityDays: DEFAULT_SERVER_VALIDITY_DAYS,
      },
    });
    expect(proxy.tlsSecret).toBe(certificate.secret);
    expect(stack.resolve(proxy.clientCaCertificate)).toEqual(getAtt(certificate.resource, 'CaCertificate'));
  });

  test('THEN the hosts boot after it, read its secret (not the CA\'s), and a re-issue is a new launch template version', () => {
    template.hasResource('AWS::AutoScaling::AutoScalingGroup', { DependsOn: Match.arrayWith([logicalIdOf(certificate.resource)]) });
    const userData = JSON.stringify(template.findResources('AWS::EC2::LaunchTemplate'));
    expect(userData).toContain(JSON.stringify({ TlsSecretArn: ref(certificate.secret) }).slice(1, -1));
    template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        TagSpecifications: Match.arrayWith([{ ResourceType: 'instance', Tags: Match.arrayWith([{ Key: SERIAL_TAG, Value: getAtt(certificate.resource, 'CertificateSerial') }]) }]),
      }),
    });
    const hostStatements = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [ref(proxy.hostRole)] } })).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Resource: unknown }>);
    expect(hostStatements.map((s) => s.Resource)).toContainEqual(ref(certificate.secret));
    expect(JSON.stringify(hostStatements)).not.toContain(logicalIdOf(certificate.caSecret));
  });

  test('THEN the function runs outside any VPC on Node.js 24 and may write the hosts\' secret and read and write the CA\'s, nothing more', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'aurora-proxy-kit PgBouncer listener certificate',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      VpcConfig: Match.absent(),
      TracingConfig: { Mode: 'Active' },
    });
    const statements = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [ref(certificate.function.role!)] } })).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual([
      { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
      { Action: 'secretsmanager:PutSecretValue', Effect: 'Allow', Resource: ref(certificate.secret) },
      { Action: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'], Effect: 'Allow', Resource: ref(certificate.caSecret) },
    ]);
  });

  test('THEN the function and the provider carry checkov skips with reasons, CKV_AWS_117 among them', () => {
    const fn = template.toJSON().Resources[logicalIdOf(certificate.function)];
    expect(fn.Metadata.checkov.skip.map((s: { id: string }) => s.id)).toEqual(['CKV_AWS_116', 'CKV_AWS_115', 'CKV_AWS_117']);
    expect(fn.Metadata.checkov.skip.every((s: { comment: string }) => s.comment.length > 20)).toBe(true);
  });

  test('THEN cdk-nag AwsSolutions finds nothing unacknowledged in the certificate', () => {
    const findings = new AwsSolutionsChecks().validateScope(app).violations.filter((v) => v.violatingResources.some((r) => r.constructPath?.startsWith('Stack/Pooler/Certificate')));
    expect(findings).toEqual([]);
  });
});

describe('PgBouncerProxy with tlsCertificate', () => {
  test('GIVEN the user\'s secret and CA WHEN synthesized THEN no certificate is issued, the hosts read that secret and consumers get that CA', () => {
    const { stack } = newStack();
    const secret = secretsmanager.Secret.fromSecretNameV2(stack, 'Tls', 'pooler-tls');
    const { proxy } = (() => {
      const vpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
      const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc });
      return { proxy: new PgBouncerProxy(stack, 'Pooler', { cluster, packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'k' }, tlsCertificate: { secret, caCertificatePem: USER_CA_PEM } }) };
    })();
    const template = Template.fromStack(stack);
    template.resourceCountIs('Custom::PgBouncerCertificate', 0);
    expect(proxy.certificate).toBeUndefined();
    expect(proxy.clientCaCertificate).toBe(USER_CA_PEM);
    expect(proxy.tlsSecret).toBe(secret);
  });

  test('GIVEN a CA that is not one PEM certificate WHEN the proxy is made THEN it is refused, naming the prop', () => {
    const { stack } = newStack();
    const secret = secretsmanager.Secret.fromSecretNameV2(stack, 'Tls', 'pooler-tls');
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: isolatedVpc(stack, 'DataVpc', '10.10.0.0/16') });
    const create = () => new PgBouncerProxy(stack, 'Pooler', { cluster, packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'k' }, tlsCertificate: { secret, caCertificatePem: 'arn:aws:acm:...' } });
    expect(create).toThrow(kitError('Stack/Pooler', 'tlsCertificate.caCertificatePem "arn:aws:acm:..." is not one PEM certificate: pass the CA certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----) that consumers verify the listeners against'));
  });
});

describe('PgBouncerCertificate', () => {
  test.each([
    [Duration.days(0), 'validity 0 days is out of range: a whole number of days from 1 to 3650 (half the CA\'s 20 years: a re-issue keeps the CA for 10 years at least)'],
    [Duration.days(3651), 'validity 3651 days is out of range: a whole number of days from 1 to 3650 (half the CA\'s 20 years: a re-issue keeps the CA for 10 years at least)'],
  ])('GIVEN validity %s WHEN made THEN it is refused', (validity, message) => {
    const { stack } = newStack();
    const service = { vpcEndpointServiceId: 'vpce-svc-0a1b2c3d4e5f60718', vpcEndpointServiceName: 'com.amazonaws.vpce.us-east-1.vpce-svc-0a1b2c3d4e5f60718' } as unknown as ec2.IVpcEndpointService;
    expect(() => new PgBouncerCertificate(stack, 'Certificate', { endpointService: service, validity })).toThrow(kitError('Stack/Certificate', message));
  });

  test('GIVEN a validity of 90 days WHEN made THEN the request carries it', () => {
    const { stack } = newStack();
    const service = { vpcEndpointServiceId: 'vpce-svc-0a1b2c3d4e5f60718' } as unknown as ec2.IVpcEndpointService;
    new PgBouncerCertificate(stack, 'Certificate', { endpointService: service, validity: Duration.days(90) });
    Template.fromStack(stack).hasResourceProperties('Custom::PgBouncerCertificate', { Request: Match.objectLike({ serviceId: 'vpce-svc-0a1b2c3d4e5f60718', validityDays: 90 }) });
  });
});
