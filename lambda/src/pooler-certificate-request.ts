/**
 * What the pooler certificate function is asked to issue, and the checks of that request: the part the
 * CDK construct and the Terraform module's tests use without a crypto library (kept apart from
 * pooler-certificate.ts, as role-bootstrap-request.ts is from role-bootstrap.ts).
 */
import { SECRET_ARN_PATTERN } from './role-bootstrap-request';

/** One certificate for the interface endpoints of one VPC endpoint service. */
export interface PoolerCertificateRequest {
  /** The endpoint service's id, `vpce-svc-<hex>`: the label every interface endpoint's DNS name ends with. */
  readonly serviceId: string;
  /** The endpoint service's Region. */
  readonly region: string;
  /** The partition's DNS suffix: `amazonaws.com`, `amazonaws.com.cn` in China. */
  readonly dnsSuffix: string;
  /** The secret the hosts read: it receives `{"certificate", "privateKey", "ca"}` (PEM). */
  readonly tlsSecretArn: string;
  /** The secret only this function reads: the CA's `{"certificate", "privateKey"}`, kept across re-issues. */
  readonly caSecretArn: string;
  /** Days the server certificate is valid. */
  readonly validityDays: number;
}

/** The server certificate's default validity: deploy-time issuance has no renewal, so it is long. */
export const DEFAULT_SERVER_VALIDITY_DAYS = 1825;
/** The CA's validity; a CA that would expire before a new server certificate is replaced. */
export const CA_VALIDITY_DAYS = 7300;
/** At most half the CA's: a CA is kept through re-issues for this long at least. */
export const MAX_SERVER_VALIDITY_DAYS = CA_VALIDITY_DAYS / 2;
/** What the function returns to CloudFormation / aws_lambda_invocation (no key material). */
export const CERTIFICATE_ATTRIBUTES = { caCertificate: 'CaCertificate', serial: 'CertificateSerial' } as const;

const SERVICE_ID_PATTERN = /^vpce-svc-[0-9a-f]{8,17}$/;
const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const DNS_SUFFIX_PATTERN = /^[a-z0-9]+(\.[a-z0-9]+)+$/;

/**
 * The names consumers connect to. An interface endpoint of an endpoint service gets a Regional name
 * `vpce-<endpoint id>-<suffix>.vpce-svc-<id>.<region>.vpce.amazonaws.com` and one zonal name per zone,
 * `vpce-<endpoint id>-<suffix>-<az>.vpce-svc-<id>...` (AWS PrivateLink whitepaper, "Creating
 * highly-available endpoint services"): one label left of the service's, which one wildcard covers for
 * every endpoint, present and future, in any consumer VPC.
 */
export function certificateNames(request: Pick<PoolerCertificateRequest, 'serviceId' | 'region' | 'dnsSuffix'>): string[] {
  return [`*.${request.serviceId}.${request.region}.vpce.${request.dnsSuffix}`];
}

/** The subtree the CA may issue for (its name constraint): every interface endpoint name of the partition. */
export function permittedSubtree(dnsSuffix: string): string {
  return `vpce.${dnsSuffix}`;
}

/** Problems with a request, each naming the value and the fix; empty when valid. */
export function certificateRequestProblems(request: Partial<PoolerCertificateRequest>): string[] {
  const problems: string[] = [];
  const text = (v: unknown): string => JSON.stringify(v) ?? 'undefined';
  if (typeof request.serviceId !== 'string' || !SERVICE_ID_PATTERN.test(request.serviceId)) problems.push(`serviceId ${text(request.serviceId)} is not a VPC endpoint service id: pass the endpoint service's id (vpce-svc-<hex>)`);
  if (typeof request.region !== 'string' || !REGION_PATTERN.test(request.region)) problems.push(`region ${text(request.region)} is not a Region name such as us-east-1`);
  if (typeof request.dnsSuffix !== 'string' || !DNS_SUFFIX_PATTERN.test(request.dnsSuffix)) problems.push(`dnsSuffix ${text(request.dnsSuffix)} is not a DNS suffix: pass the partition's, e.g. amazonaws.com`);
  for (const key of ['tlsSecretArn', 'caSecretArn'] as const) {
    const arn = request[key];
    if (typeof arn !== 'string' || !SECRET_ARN_PATTERN.test(arn)) problems.push(`${key} ${text(arn)} is not a Secrets Manager secret ARN: use arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`);
  }
  if (typeof request.tlsSecretArn === 'string' && request.tlsSecretArn === request.caSecretArn) problems.push('tlsSecretArn and caSecretArn are the same secret: the hosts read the first, so the CA\'s key needs a secret of its own');
  const days = request.validityDays;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_SERVER_VALIDITY_DAYS) problems.push(`validityDays ${text(days)} is out of range: an integer from 1 to ${MAX_SERVER_VALIDITY_DAYS} (half the CA's 20 years: a re-issue keeps the CA for 10 years at least)`);
  return problems;
}
