import { Aws, CustomResource, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { CERTIFICATE_ATTRIBUTES, MAX_SERVER_VALIDITY_DAYS, DEFAULT_SERVER_VALIDITY_DAYS, type PoolerCertificateRequest } from '../lambda/src/pooler-certificate-request';
import { skipCheckov } from './private/checkov';
import { BASIC_EXECUTION_ACKNOWLEDGEMENT, DEPLOY_TIME_FUNCTION_SKIPS, deployTimeResource } from './private/deploy-time-resource';
import { handlerFunction } from './private/handler-function';
import { allowLogsToUseKey, stackLogGroupPattern } from './private/key-policies';
import { throwIfInvalid } from './private/validation';

/** A listeners' certificate made outside the kit. */
export interface PgBouncerTlsCertificate {
  /** A secret holding JSON `{"certificate", "privateKey", "ca"}` (PEM), issued for the names consumers connect to. */
  readonly secret: secretsmanager.ISecret;
  /** The CA certificate (PEM) the certificate chains to: consumers verify the listeners against it. */
  readonly caCertificatePem: string;
}

const PEM_CERTIFICATE = /^\s*-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*$/;

/** Problems with a user's certificate, naming the prop (`tlsCertificate`) and the fix; empty when valid. */
export function tlsCertificateProblems(tls: PgBouncerTlsCertificate | undefined): string[] {
  if (tls === undefined || Token.isUnresolved(tls.caCertificatePem)) return [];
  return PEM_CERTIFICATE.test(tls.caCertificatePem)
    ? []
    : [`tlsCertificate.caCertificatePem ${JSON.stringify(tls.caCertificatePem.slice(0, 40))} is not one PEM certificate: pass the CA certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----) that consumers verify the listeners against`];
}

/** Properties of a PgBouncerCertificate. */
export interface PgBouncerCertificateProps {
  /** The endpoint service whose interface endpoints the certificate names (`*.<service id>.<region>.vpce.<suffix>`). */
  readonly endpointService: ec2.IVpcEndpointService;
  /**
   * How long the server certificate is valid (1..3650 days; the CA is valid 20 years). It is issued again at a deploy that changes
   * the endpoint service or this validity; nothing renews it in between.
   * @default Duration.days(1825)
   */
  readonly validity?: Duration;
  /**
   * Key that encrypts the function's environment and log group. Its policy must let CloudWatch Logs use it.
   * @default - a new key with rotation on
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * The PgBouncer listeners' certificate from a CA the kit manages, issued at deploy time by a custom
 * resource (lambda/src/pooler-certificate.ts): an ECDSA P-256 CA, constrained to interface endpoint
 * names and kept in a secret only the function reads (`caSecret`), signs a certificate for every
 * interface endpoint of the service, which goes into `secret` (`{"certificate", "privateKey", "ca"}`),
 * the secret the hosts read at boot. Consumers verify the listeners against `caCertificatePem`.
 *
 * A kit-managed CA rather than AWS Private CA, whose general-purpose CA costs 400 USD a month
 * (docs/PGBOUNCER-ENGINE.md): this CA is trusted by this fleet's consumers only, for interface endpoint
 * names only, and costs a function run per deploy and two secrets.
 */
export class PgBouncerCertificate extends Construct {
  /** The hosts' secret: `{"certificate", "privateKey", "ca"}` (PEM), written by the function. */
  public readonly secret: secretsmanager.Secret;
  /** The CA's certificate and key, read and written by the function only. */
  public readonly caSecret: secretsmanager.Secret;
  /** The CA's certificate (PEM): what consumers verify the listeners against. */
  public readonly caCertificatePem: string;
  /** The server certificate's serial (hex): changes with every issue. */
  public readonly certificateSerial: string;
  public readonly function: lambda.Function;
  public readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: PgBouncerCertificateProps) {
    super(scope, id);
    const validityDays = props.validity?.toDays() ?? DEFAULT_SERVER_VALIDITY_DAYS;
    throwIfInvalid(this, [
      Token.isUnresolved(validityDays) || (Number.isInteger(validityDays) && validityDays >= 1 && validityDays <= MAX_SERVER_VALIDITY_DAYS)
        ? undefined
        : `validity ${validityDays} days is out of range: a whole number of days from 1 to ${MAX_SERVER_VALIDITY_DAYS} (half the CA's 20 years: a re-issue keeps the CA for 10 years at least)`,
    ]);

    // Both start with a generated placeholder: the function writes the real values before any host boots.
    this.secret = new secretsmanager.Secret(this, 'Secret', { description: `The PgBouncer listeners' certificate, key and CA of ${this.node.path} (written by its issuing function)` });
    this.caSecret = new secretsmanager.Secret(this, 'CaSecret', { description: `The CA of the PgBouncer listeners' certificate of ${this.node.path}: read by its issuing function only` });
    for (const secret of [this.secret, this.caSecret]) {
      Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: 'a certificate, not a password: it is issued again when the endpoint service changes; rotation would need the hosts replaced too' });
      skipCheckov(secret, [{ id: 'CKV_AWS_149', comment: 'Encrypted with the account\'s aws/secretsmanager key, as the kit\'s other secrets are; access is granted on the secret itself (the hosts read one, only the issuing function the CA\'s)' }]);
    }

    const key = props.encryptionKey ?? new kms.Key(this, 'Key', { description: `Encrypts the environment and logs of ${this.node.path}`, enableKeyRotation: true });
    if (!props.encryptionKey) allowLogsToUseKey(key as kms.Key, [stackLogGroupPattern(Stack.of(this))]);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, encryptionKey: key });
    // Outside any VPC: it calls Secrets Manager only, through its public endpoint.
    this.function = handlerFunction(this, 'Function', {
      kitHandler: 'pooler-certificate',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(1),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environmentEncryption: key,
      description: 'aurora-proxy-kit PgBouncer listener certificate',
    });
    // Least privilege: write the hosts' secret; read and write the CA's. Nothing else.
    this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:PutSecretValue'], resources: [this.secret.secretArn] }));
    this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue'], resources: [this.caSecret.secretArn] }));

    const request: PoolerCertificateRequest = {
      serviceId: props.endpointService.vpcEndpointServiceId,
      region: Aws.REGION,
      dnsSuffix: Aws.URL_SUFFIX,
      tlsSecretArn: this.secret.secretArn,
      caSecretArn: this.caSecret.secretArn,
      validityDays,
    };
    this.resource = deployTimeResource(this, { onEventHandler: this.function, logGroup, resourceType: 'Custom::PgBouncerCertificate', properties: { Request: request }, what: 'the certificate function' });
    this.caCertificatePem = this.resource.getAttString(CERTIFICATE_ATTRIBUTES.caCertificate);
    this.certificateSerial = this.resource.getAttString(CERTIFICATE_ATTRIBUTES.serial);
    this.acknowledgeFindings();
  }

  private acknowledgeFindings(): void {
    Validations.of(this.function).acknowledge(BASIC_EXECUTION_ACKNOWLEDGEMENT, {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; the secrets are named one by one',
    });
    skipCheckov(this.function, [
      ...DEPLOY_TIME_FUNCTION_SKIPS,
      { id: 'CKV_AWS_117', comment: 'Calls only Secrets Manager, through its public endpoint; in a VPC it would need a Secrets Manager interface endpoint and gain no isolation (it reaches no resource in the VPC)' },
    ]);
  }
}
