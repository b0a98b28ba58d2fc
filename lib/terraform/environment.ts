import { type ConsumerDeployment, consumerEnvironment } from '../../lambda/src/environment';
import { type ConnectionMode, type EndpointRole, consumerEndpointTls } from '../model';
import { alignedMap, hclString, hclTemplate, slot } from './hcl';
import type { Region } from './regions';

/**
 * The lambda-consumer module's `environment.variables`, written by the consumers' contract
 * (lambda/src/environment.ts) as the CDK construct's are: `consumerEnvironment` is called with a probe
 * for each setting, and each probe is swapped for the module's HCL reference. It is called once per
 * kind of endpoint, which differ in auth and TLS: a PgBouncer engine endpoint (its user's password
 * secret, verify-full against the listeners' CA), an RDS Proxy's default endpoint (IAM, verify-full) and
 * an endpoint created beside it (IAM, verify-proxy-domain, consumerEndpointTls). A value that differs is
 * chosen by a condition known at plan; the variables of some kinds only are merged in the same way.
 */
const IS_PGBOUNCER = 'var.auth == "secret"';
const IS_DEFAULT = 'var.endpoint.is_proxy_default_endpoint';

/** The kinds of endpoint, in the order their conditions are tested (the last is the remaining case). */
const KINDS: ReadonlyArray<{ readonly condition?: string; readonly kind: 'pgbouncer' | 'default' | 'custom' }> = [
  { condition: IS_PGBOUNCER, kind: 'pgbouncer' },
  { condition: IS_DEFAULT, kind: 'default' },
  { kind: 'custom' },
];

const PROBES: ReadonlyArray<readonly [string, string]> = [
  ['xHOSTx', 'var.endpoint.endpoint'],
  ['918273', 'tostring(var.endpoint.port)'],
  ['xDATABASEx', 'var.database_name'],
  ['xUSERx', 'var.db_user'],
  ['xROLEx', 'var.endpoint.target_role'],
  ['xMODEx', 'var.connection_mode'],
  ['xPROXYx', 'var.endpoint.proxy_default_endpoint'],
  ['xSECRETx', 'var.password_secret_arn'],
  ['xCAx', 'var.endpoint.tls_ca_certificate'],
];

function probedEnvironment(kind: (typeof KINDS)[number]['kind']): Record<string, string> {
  const deployment: ConsumerDeployment = {
    host: 'xHOSTx',
    port: 918273,
    database: 'xDATABASEx',
    user: 'xUSERx',
    endpointRole: 'xROLEx' as EndpointRole,
    auth: kind === 'pgbouncer' ? { kind: 'secret', secretArn: 'xSECRETx' } : { kind: 'iam' },
    tls: kind === 'pgbouncer' ? { mode: 'verify-full', ca: 'xCAx' } : consumerEndpointTls({ isProxyDefaultEndpoint: kind === 'default', proxyDefaultEndpoint: 'xPROXYx' }),
    connectionMode: 'xMODEx' as ConnectionMode,
  };
  return consumerEnvironment(deployment);
}

/** `a ? x : b ? y : z` over the kinds, collapsed where the kinds agree. */
function chooseByKind(values: ReadonlyArray<string>): string {
  if (values.every((v) => v === values[0])) return values[0];
  const [first, ...rest] = values;
  const otherwise = chooseByKind(rest);
  return `${KINDS[KINDS.length - values.length].condition} ? ${first} : ${otherwise.includes(' ? ') ? `(${otherwise})` : otherwise}`;
}

/** A value with its probes as HCL references: the bare reference, a template, or a literal. */
function hclOf(value: string): string {
  const whole = PROBES.find(([probe]) => probe === value);
  if (whole) return whole[1];
  const used = PROBES.filter(([probe]) => value.includes(probe));
  if (used.length === 0) return hclString(value);
  let text = value;
  used.forEach(([probe], i) => (text = text.split(probe).join(slot(i))));
  return hclTemplate(text, used.map(([, expr]) => expr));
}

export function consumerEnvironmentRegion(): Region {
  const envs = KINDS.map(({ kind }) => probedEnvironment(kind));
  const names = [...new Set(envs.flatMap((e) => Object.keys(e)))];
  const common: Array<[string, string]> = [];
  const partial = envs.map(() => [] as Array<[string, string]>);
  for (const name of names) {
    if (envs.every((e) => e[name] !== undefined)) common.push([name, chooseByKind(envs.map((e) => hclOf(e[name])))]);
    else envs.forEach((e, k) => e[name] !== undefined && partial[k].push([name, hclOf(e[name])]));
  }
  const inline = (entries: ReadonlyArray<[string, string]>) => (entries.length === 0 ? 'tomap({})' : `tomap({ ${entries.map(([k, v]) => `${k} = ${v}`).join(', ')} })`);
  return {
    module: 'lambda-consumer',
    file: 'main.tf',
    id: 'consumer-environment',
    source: 'lambda/src/environment.ts',
    lines: [
      '    variables = merge(',
      '      {',
      ...alignedMap('        ', common),
      '      },',
      ...(partial.some((p) => p.length > 0) ? [`      ${chooseByKind(partial.map(inline))},`] : []),
      '    )',
    ],
  };
}
