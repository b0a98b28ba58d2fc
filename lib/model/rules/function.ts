/** Rules of the consumer functions (LambdaConsumer; modules/lambda-consumer). */
import { RESERVED_ROLE_PREFIXES, ROLE_NAME_PATTERN } from '../../../lambda/src/role-bootstrap-request';
import { CONNECTION_MODES } from '../vocabulary';
import { type Rule, custom, integerRange, oneOf } from '../rule-table';
import { type ApiRouteRuleInput, SECRET_CONSUMER_APIS, apiRouteRule } from './api-routes';
import { type LambdaCodeInput, endpointRoleRule, kmsKeyRule, lambdaCodeRule } from './shared';

export interface FunctionRuleInput extends LambdaCodeInput, ApiRouteRuleInput {
  readonly memorySizeMb?: number;
  readonly timeoutSeconds?: number;
  readonly reservedConcurrentExecutions?: number;
  readonly connectionMode?: string;
  /** The role of the endpoint the function connects through. */
  readonly targetRole?: string;
  /** Whether that endpoint is its proxy's default endpoint (rather than one created beside it). */
  readonly isProxyDefaultEndpoint?: boolean;
  /** Host name of the proxy's default endpoint: the name a custom endpoint's certificate is checked against. */
  readonly proxyDefaultEndpoint?: string | null;
  /** The CA a PgBouncer engine endpoint's certificate chains to: such an endpoint needs no proxy default endpoint. */
  readonly tlsCaCertificate?: string | null;
  /** The password secret the function logs in with (PgBouncer engine); absent: IAM through RDS Proxy. */
  readonly passwordSecretArn?: string | null;
  /** The rds-proxy module's connect_arn_prefix (RDS Proxy's IAM authentication). */
  readonly connectArnPrefix?: string | null;
  /** How the function logs in: `iam` (RDS Proxy) or `secret` (PgBouncer engine). */
  readonly auth?: string;
  readonly createKmsKey?: boolean;
  readonly kmsKeyArn?: string;
  /** The database user the function logs in as: a role the role bootstrap makes. */
  readonly dbUser?: string;
}

const FUNCTION_MODULE = 'lambda-consumer';

/** The lambda-consumer module's `auth`: a setting known at plan (the secret's ARN may be known only at apply). */
export const CONSUMER_AUTH_KINDS = ['iam', 'secret'] as const;

/**
 * The role bootstrap's own check of a role name (lambda/src/role-bootstrap-request.ts, which refuses the
 * request at deploy time): the consumer's user must be a role it would make, so the name fails at synth.
 */
const ROLE_NAME_USE = 'lower-case letters, digits and underscores, not starting with a digit, at most 63 characters';
export function databaseRoleNameProblem(name: string, value: string): string | undefined {
  if (!ROLE_NAME_PATTERN.test(value)) return `${name} ${value} is not a database role name the role bootstrap makes: use ${ROLE_NAME_USE}`;
  if (RESERVED_ROLE_PREFIXES.some((p) => value.startsWith(p))) return `${name} ${value} starts with a prefix PostgreSQL and RDS keep for their own roles (${RESERVED_ROLE_PREFIXES.join(', ')}): use a name that does not`;
  return undefined;
}

export const FUNCTION_RULES: ReadonlyArray<Rule<FunctionRuleInput>> = [
  custom({
    id: 'consumer-db-user',
    properties: ['dbUser'],
    terraform: { module: FUNCTION_MODULE, names: { dbUser: 'db_user' } },
    summary: `a role the role bootstrap makes: ${ROLE_NAME_USE}, not starting with ${RESERVED_ROLE_PREFIXES.join(' or ')}`,
    check: (i, n) => databaseRoleNameProblem(n('dbUser'), i.dbUser!),
  }),
  integerRange({
    id: 'memory-size',
    properties: ['memorySizeMb'],
    // Messages name the construct prop, whose unit is implied, not the model's unit-suffixed key.
    names: { memorySizeMb: 'memorySize' },
    terraform: { module: FUNCTION_MODULE, names: { memorySizeMb: 'memory_size' } },
    min: 128,
    max: 10240,
    fix: 'Lambda memory is 128 MB to 10,240 MB',
    aws: {
      constraint: 'a function has 128 MB to 10,240 MB of memory',
      sources: ['https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html'],
    },
  }),
  integerRange({
    id: 'timeout',
    properties: ['timeoutSeconds'],
    names: { timeoutSeconds: 'timeout' },
    terraform: { module: FUNCTION_MODULE, names: { timeoutSeconds: 'timeout' } },
    min: 1,
    max: 900,
    fix: 'a Lambda function runs at most 15 minutes',
    aws: {
      constraint: 'a function times out after 1 to 900 seconds',
      sources: ['https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html'],
    },
  }),
  integerRange({
    id: 'reserved-concurrency',
    properties: ['reservedConcurrentExecutions'],
    terraform: { module: FUNCTION_MODULE, names: { reservedConcurrentExecutions: 'reserved_concurrent_executions' }, nullable: true },
    min: 1,
    max: 900,
    fix: 'Lambda keeps 100 of the default 1,000 account concurrency unreserved',
  }),
  oneOf({
    id: 'connection-mode',
    properties: ['connectionMode'],
    terraform: { module: FUNCTION_MODULE, names: { connectionMode: 'connection_mode' } },
    values: CONNECTION_MODES,
    what: 'a connection mode',
  }),
  endpointRoleRule(
    'consumer-target-role',
    { module: FUNCTION_MODULE, name: 'endpoint.target_role' },
    'CDK reads the role from the RdsProxyEndpoint construct the function is given',
  ),
  custom({
    id: 'consumer-tls-server-name',
    properties: ['isProxyDefaultEndpoint'],
    terraform: {
      module: FUNCTION_MODULE,
      names: {
        isProxyDefaultEndpoint: 'endpoint.is_proxy_default_endpoint',
        proxyDefaultEndpoint: 'endpoint.proxy_default_endpoint',
        tlsCaCertificate: 'endpoint.tls_ca_certificate',
      },
    },
    terraformOnly: 'CDK reads the proxy\'s default endpoint from the RdsProxyEndpoint construct the function is given',
    summary: 'a custom endpoint needs the proxy\'s default endpoint, the name its TLS certificate is checked against',
    aws: {
      constraint:
        'RDS Proxy\'s certificate is a wildcard for the proxy\'s domain: VERIFY_IDENTITY (verify-full) works on the proxy\'s default endpoint only, not on endpoints you create, which allow REQUIRED and VERIFY_CA',
      sources: [
        'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.howitworks.html#rds-proxy-security.tls',
        'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html',
      ],
    },
    // A PgBouncer engine endpoint's certificate names the endpoint itself and chains to the listeners' CA.
    check: (i, n) =>
      !i.isProxyDefaultEndpoint && (i.proxyDefaultEndpoint ?? undefined) === undefined && (i.tlsCaCertificate ?? undefined) === undefined
        ? `${n('proxyDefaultEndpoint')} is not set: a custom proxy endpoint's certificate names the proxy's default endpoint, not the endpoint, so pass the proxy's default endpoint host name (verify-full works on the default endpoint only)`
        : undefined,
  }),
  oneOf({
    id: 'consumer-auth',
    properties: ['auth'],
    terraform: { module: FUNCTION_MODULE, names: { auth: 'auth' } },
    terraformOnly: 'CDK takes the credential from the endpoint construct the function is given (IProxyEndpoint.consumerConnection)',
    values: CONSUMER_AUTH_KINDS,
    what: 'a consumer credential',
  }),
  custom({
    id: 'consumer-credential',
    properties: ['auth'],
    terraform: {
      module: FUNCTION_MODULE,
      names: { auth: 'auth', passwordSecretArn: 'password_secret_arn', connectArnPrefix: 'connect_arn_prefix', tlsCaCertificate: 'endpoint.tls_ca_certificate' },
    },
    terraformOnly: 'CDK takes the credential from the endpoint construct the function is given (IProxyEndpoint.consumerConnection)',
    summary: 'a consumer logs in one way: an IAM token through RDS Proxy (connect_arn_prefix), or its password secret through the PgBouncer engine (password_secret_arn, with the listeners\' CA)',
    check: (i, n) => {
      const set = (v: string | null | undefined) => (v ?? undefined) !== undefined;
      if (i.auth === 'secret') {
        if (!set(i.passwordSecretArn)) return `${n('passwordSecretArn')} is not set: auth secret logs in with a password secret, so pass the pgbouncer-proxy module's consumer_secret_arns entry of db_user`;
        if (!set(i.tlsCaCertificate)) return `${n('tlsCaCertificate')} is not set: a PgBouncer engine endpoint's consumers trust only the listeners' CA, so pass the pgbouncer-proxy module's endpoint, which carries it`;
        if (set(i.connectArnPrefix)) return `${n('connectArnPrefix')} is set with auth secret: a consumer logs in one way, so unset connect_arn_prefix`;
        return undefined;
      }
      if (!set(i.connectArnPrefix)) return `${n('connectArnPrefix')} is not set: auth iam logs in with an IAM token through RDS Proxy, so pass the rds-proxy module's connect_arn_prefix`;
      if (set(i.passwordSecretArn)) return `${n('passwordSecretArn')} is set with auth iam: a consumer logs in one way, so set auth to secret for a PgBouncer engine endpoint, or unset password_secret_arn`;
      return undefined;
    },
  }),
  kmsKeyRule<FunctionRuleInput>('function-kms-key', FUNCTION_MODULE),
  lambdaCodeRule<FunctionRuleInput>('function-code-source', FUNCTION_MODULE),
  // A consumer that logs in with its password secret reads it at cold start, from inside its VPC.
  apiRouteRule<FunctionRuleInput>('consumer-api-route', FUNCTION_MODULE, SECRET_CONSUMER_APIS, 'the consumer function (it reads its password secret)', { auth: 'auth' }),
];
