import { type ConsumerDeployment, consumerEnvironment } from '../../lambda/src/environment';
import { type ConnectionMode, type EndpointRole, consumerEndpointTls } from '../model';
import { alignedMap, hclString, hclTemplate, slot } from './hcl';
import type { Region } from './validations';

/**
 * The lambda-consumer module's `environment.variables`, written by the consumers' contract
 * (lambda/src/environment.ts) as the CDK construct's are: `consumerEnvironment` is called with a probe
 * for each setting, and each probe is swapped for the module's HCL reference. It is called twice, for
 * a consumer of the proxy's default endpoint and of an endpoint created beside it, since the two differ
 * in TLS (consumerEndpointTls); a variable of one only is added by a condition known at plan.
 */
const IS_DEFAULT = 'var.endpoint.is_proxy_default_endpoint';

const PROBES: ReadonlyArray<readonly [string, string]> = [
  ['xHOSTx', 'var.endpoint.endpoint'],
  ['918273', 'tostring(local.postgres_port)'],
  ['xDATABASEx', 'var.database_name'],
  ['xUSERx', 'var.db_user'],
  ['xROLEx', 'var.endpoint.target_role'],
  ['xMODEx', 'var.connection_mode'],
  ['xPROXYx', 'var.endpoint.proxy_default_endpoint'],
];

function probedEnvironment(isProxyDefaultEndpoint: boolean): Record<string, string> {
  const deployment: ConsumerDeployment = {
    host: 'xHOSTx',
    port: 918273,
    database: 'xDATABASEx',
    user: 'xUSERx',
    endpointRole: 'xROLEx' as EndpointRole,
    auth: { kind: 'iam' },
    tls: consumerEndpointTls({ isProxyDefaultEndpoint, proxyDefaultEndpoint: 'xPROXYx' }),
    connectionMode: 'xMODEx' as ConnectionMode,
  };
  return consumerEnvironment(deployment);
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
  const forDefault = probedEnvironment(true);
  const forCustom = probedEnvironment(false);
  const names = [...new Set([...Object.keys(forCustom), ...Object.keys(forDefault)])];
  const common: Array<[string, string]> = [];
  const onlyCustom: Array<[string, string]> = [];
  const onlyDefault: Array<[string, string]> = [];
  for (const name of names) {
    const [d, c] = [forDefault[name], forCustom[name]];
    if (d === undefined) onlyCustom.push([name, hclOf(c)]);
    else if (c === undefined) onlyDefault.push([name, hclOf(d)]);
    else common.push([name, d === c ? hclOf(d) : `${IS_DEFAULT} ? ${hclOf(d)} : ${hclOf(c)}`]);
  }
  const inline = (entries: ReadonlyArray<[string, string]>) => `{ ${entries.map(([k, v]) => `${k} = ${v}`).join(', ')} }`;
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
      ...(onlyCustom.length > 0 ? [`      ${IS_DEFAULT} ? {} : ${inline(onlyCustom)},`] : []),
      ...(onlyDefault.length > 0 ? [`      ${IS_DEFAULT} ? ${inline(onlyDefault)} : {},`] : []),
      '    )',
    ],
  };
}
