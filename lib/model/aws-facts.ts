/**
 * AWS constraints the kit relies on that are not checks of a user's input (those are rule rows with an
 * `aws` source, see rule-table.ts): how AWS behaves, which the kit's code is written around. Each names
 * its source and the test that exercises it; the test file names the fact's id, and a test holds the
 * two together. docs/AWS-RULES.md lists these beside the rule rows.
 */
import type { AwsSource } from './rule-table';

export interface AwsFact extends AwsSource {
  /** Stable id; the test that exercises the fact names it. */
  readonly id: string;
  /** What the kit does because of it. */
  readonly consequence: string;
  /** The test file (relative to the repository) that exercises the fact. */
  readonly exercisedBy: string;
}

const AURORA_PROXY_TLS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.howitworks.html#rds-proxy-security.tls';
const AURORA_PROXY_ENDPOINTS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html';
const AURORA_PROXY_TROUBLESHOOTING = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.troubleshooting.html';

export const AWS_FACTS: ReadonlyArray<AwsFact> = [
  {
    id: 'proxy-tls-custom-endpoint-identity',
    constraint:
      'RDS Proxy serves ACM wildcard certificates for *.proxy-<id>.<region>.rds.amazonaws.com that chain to Amazon Trust Services roots; VERIFY_IDENTITY works on the default endpoint only, not on endpoints you create (<name>.endpoint.proxy-<id>...)',
    sources: [AURORA_PROXY_TLS, AURORA_PROXY_ENDPOINTS, 'https://www.amazontrust.com/repository/'],
    consequence:
      'consumers of a custom endpoint use DB_TLS=verify-proxy-domain: the chain must end at an Amazon root and the certificate must be valid for the proxy\'s default endpoint (DB_TLS_SERVER_NAME), whose domain DB_HOST must share',
    exercisedBy: 'test/lambda/proxy-tls.test.ts',
  },
  {
    id: 'pooler-authentication-failure-codes',
    constraint:
      'PgBouncer reports its own errors, failed logins included, as SQLSTATE 08P01; RDS Proxy documents its login failures by message ("IAM authentication failed", "has no credentials for the role") without a SQLSTATE',
    sources: [AURORA_PROXY_TROUBLESHOOTING, 'https://github.com/pgbouncer/pgbouncer/blob/master/src/client.c'],
    consequence: 'consumers classify those messages as authentication failures and never retry them, whatever their SQLSTATE',
    exercisedBy: 'test/lambda/hardening.test.ts',
  },
];
