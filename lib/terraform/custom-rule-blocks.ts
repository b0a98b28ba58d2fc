/**
 * The HCL of the rules whose logic is their own (catalog lookups, several variables): a renderer per rule id.
 * Messages come from the model's rule, called with probe values that are then swapped for HCL expressions.
 */
import {
  INSTANCE_CLASS_CATALOG,
  MAX_POOLER_CONSUMER_USERS,
  RESERVED_LOAD_BALANCER_PREFIX,
  MAX_PROXY_ENDPOINTS,
  OPTIMIZED_READS_FAMILIES,
  OPTIMIZED_READS_MIN_MAJOR,
  RESERVED_CONNECTIONS,
  AWS_APIS,
  type AwsApiName,
  POOLER_HOST_APIS,
  ROLE_BOOTSTRAP_APIS,
  SECRET_CONSUMER_APIS,
} from '../model';
import { GRAVITON_SIZE_VCPUS, GRAVITON_TYPE_PATTERN, POOLER_INSTANCE_FAMILIES } from '../model/pgbouncer-hosts';
import { RESERVED_ROLE_PREFIXES, ROLE_NAME_PATTERN } from '../../lambda/src/role-bootstrap-request';
import { hclString, hclTemplate, hclValue, slot } from './hcl';
import type { ModuleRule } from './modules';
import type { Block } from './validation-blocks';

/** A custom rule's message for a probe input, naming the module's variables. */
function terraformMessage(rule: ModuleRule, input: Record<string, unknown>): string {
  const names = rule.terraform.names;
  const message = rule.kind === 'custom' ? rule.check(input, (p) => names[p] ?? p) : undefined;
  if (message === undefined) throw new Error(`rule ${rule.id} accepted a probe meant to be rejected`);
  return message;
}

/** A custom rule's message with probe values turned into interpolations. */
function probed(rule: ModuleRule, input: Record<string, unknown>, probes: ReadonlyArray<readonly [string, string]>): string {
  let message = terraformMessage(rule, input);
  probes.forEach(([probe], i) => {
    if (!message!.includes(probe)) throw new Error(`probe ${probe} not found in the message of ${rule.id}: ${message}`);
    message = message!.split(probe).join(slot(i));
  });
  return hclTemplate(message, probes.map(([, expr]) => expr));
}

const PROBE = 'xPROBEx';
const INSTANCE_CLASS_RE = '^db\\\\.([a-z0-9-]+)\\\\.([a-z0-9]+)$';
const ENGINE_VERSION_RE = '^[0-9]+\\\\.[0-9]+$';

/** One precondition per way the code source can be wrong; at most one of them fails for any input. */
function lambdaCodeBlocks(rule: ModuleRule): Block[] {
  const [f, b, k] = ['var.filename', 'var.s3_bucket', 'var.s3_key'];
  return [
    { condition: `${f} == null || (${b} == null && ${k} == null)`, errorMessage: probed(rule, { filename: PROBE, s3Bucket: PROBE }, []) },
    { condition: `${f} != null || ${b} != null || ${k} != null`, errorMessage: probed(rule, { filename: null }, []) },
    { condition: `${f} != null || ${b} == null || ${k} != null`, errorMessage: probed(rule, { filename: null, s3Bucket: PROBE }, []) },
    { condition: `${f} != null || ${k} == null || ${b} != null`, errorMessage: probed(rule, { filename: null, s3Key: PROBE }, []) },
  ];
}

/**
 * A caller's route to the AWS APIs it calls: subnets with egress, or an endpoint of each API in
 * `local.vpc_endpoints` (the module's vpc_endpoints, with what its older per-service inputs name). The missing
 * APIs are listed as the model lists them, in its order; `when` limits the rule (a consumer with auth secret).
 */
function apiRouteBlocks(apis: ReadonlyArray<AwsApiName>, when?: string): (rule: ModuleRule) => Block[] {
  return (rule) => {
    const routed = 'local.vpc_endpoints';
    const missing = `[for k in ${hclValue(apis.map((a) => AWS_APIS[a].key))} : k if !contains(keys(${routed}), k)]`;
    const condition = [when === undefined ? undefined : `!(${when})`, 'var.subnets_have_egress', `length(${missing}) == 0`].filter((c) => c !== undefined).join(' || ');
    const input = { subnetsHaveEgress: false, vpcEndpoints: {}, ...(when === undefined ? {} : { auth: 'secret' }) };
    if (apis.length === 1) return [{ condition, errorMessage: probed(rule, input, []) }];
    // Over the list, not the map: a map iterates in key order, the message in the model's.
    const names = `join(", ", [for k in ${missing} : ${hclValue(Object.fromEntries(apis.map((a) => [AWS_APIS[a].key, `${AWS_APIS[a].name} (${AWS_APIS[a].key})`])))}[k]])`;
    return [{
      condition,
      errorMessage: probed(rule, input, [
        [apis.map((a) => `${AWS_APIS[a].name} (${AWS_APIS[a].key})`).join(', '), names],
        [apis.map((a) => AWS_APIS[a].key).join(', '), `join(", ", ${missing})`],
        ['of them', `length(${missing}) > 1 ? "of them" : "of it"`],
      ]),
    }];
  };
}

/** The blocks of the rules whose logic is their own (catalog lookups, several variables). */
export const CUSTOM_BLOCKS: Readonly<Record<string, (rule: ModuleRule) => Block[]>> = {
  'instance-class': (rule) => {
    const v = 'var.instance_class';
    const families = hclValue(Object.keys(OPTIMIZED_READS_FAMILIES));
    const parses = `can(regex("${INSTANCE_CLASS_RE}", ${v}))`;
    const family = `regex("${INSTANCE_CLASS_RE}", ${v})[0]`;
    const notOffered = Object.fromEntries(
      Object.keys(OPTIMIZED_READS_FAMILIES).map((f) => [f, terraformMessage(rule, { instanceClass: `db.${f}.xsizex` }).split(`db.${f}.xsizex`).join('@VALUE@')]),
    );
    return [
      { condition: parses, errorMessage: probed(rule, { instanceClass: PROBE }, [[PROBE, v]]) },
      { condition: `!${parses} || contains(${families}, try(${family}, ""))`, errorMessage: probed(rule, { instanceClass: 'db.xfamilyx.xsizex' }, [['db.xfamilyx.xsizex', v]]) },
      {
        condition: `!${parses} || !contains(${families}, try(${family}, "")) || contains(${hclValue(INSTANCE_CLASS_CATALOG.map((s) => s.instanceClass))}, ${v})`,
        errorMessage: `replace(lookup(${hclValue(notOffered)}, try(${family}, ""), ""), "@VALUE@", ${v})`,
      },
    ];
  },
  // Floor and deprecation depend on the family too: a precondition on the cluster (main.tf) checks them from catalog.tf.
  'engine-version': (rule) => {
    const v = 'var.engine_version';
    const parses = `can(regex("${ENGINE_VERSION_RE}", ${v}))`;
    return [
      { condition: parses, errorMessage: probed(rule, { engineVersion: PROBE }, [[PROBE, v]]) },
      {
        condition: `!${parses} || try(tonumber(split(".", ${v})[0]) >= ${OPTIMIZED_READS_MIN_MAJOR}, false)`,
        errorMessage: probed(rule, { engineVersion: `${OPTIMIZED_READS_MIN_MAJOR - 1}.999` }, [[`${OPTIMIZED_READS_MIN_MAJOR - 1}.999`, v]]),
      },
    ];
  },
  'parameters-keep-tls': (rule) => [
    {
      condition: 'lookup(var.parameters, "rds.force_ssl", "1") == "1"',
      errorMessage: probed(rule, { parameters: { 'rds.force_ssl': PROBE } }, [[PROBE, 'lookup(var.parameters, "rds.force_ssl", "")']]),
    },
  ],
  'session-pinning-filters': (rule) => [
    { condition: 'length(var.session_pinning_filters) == 0', errorMessage: probed(rule, { sessionPinningFilters: [PROBE] }, [[PROBE, 'join(",", var.session_pinning_filters)']]) },
  ],
  'endpoint-count': (rule) => [
    { condition: `length(var.endpoints) <= ${MAX_PROXY_ENDPOINTS}`, errorMessage: probed(rule, { endpoints: 918273 }, [['918273', 'length(var.endpoints)']]) },
  ],
  'instance-identifiers': (rule) => [{ condition: 'length(var.instance_identifiers) >= 1', errorMessage: probed(rule, { instanceIdentifiers: [] }, []) }],
  'idle-within-max': (rule) => [
    {
      condition: 'var.max_idle_connections_percent <= var.max_connections_percent',
      errorMessage: probed(rule, { maxIdleConnectionsPercent: 918273, maxConnectionsPercent: 564738 }, [
        ['918273', 'var.max_idle_connections_percent'],
        ['564738', 'var.max_connections_percent'],
      ]),
    },
  ],
  // A precondition of the for_each endpoints: each READ_ONLY one needs a reader.
  'read-only-endpoint-readers': (rule) => [
    { condition: 'each.value.target_role != "READ_ONLY" || var.readers > 0', errorMessage: probed(rule, { readers: 0, targetRole: 'READ_ONLY' }, []) },
  ],
  'consumer-tls-server-name': (rule) => [
    {
      condition: 'var.endpoint.is_proxy_default_endpoint || var.endpoint.proxy_default_endpoint != null || var.endpoint.tls_ca_certificate != null',
      errorMessage: probed(rule, { isProxyDefaultEndpoint: false }, []),
    },
  ],
  // The role bootstrap's check of a role name: its pattern, then the prefixes kept for PostgreSQL's and RDS's roles.
  'consumer-db-user': (rule) => {
    const v = 'var.db_user';
    const parses = `can(regex(${hclString(ROLE_NAME_PATTERN.source)}, ${v}))`;
    return [
      { condition: parses, errorMessage: probed(rule, { dbUser: PROBE }, [[PROBE, v]]) },
      {
        condition: `!${parses} || !anytrue([for p in ${hclValue(RESERVED_ROLE_PREFIXES)} : startswith(${v}, p)])`,
        errorMessage: probed(rule, { dbUser: 'rdszprobe' }, [['rdszprobe', v]]),
      },
    ];
  },
  'consumer-credential': (rule) => {
    const secret = 'var.auth == "secret"';
    return [
      { condition: `!(${secret}) || var.password_secret_arn != null`, errorMessage: probed(rule, { auth: 'secret' }, []) },
      { condition: `!(${secret}) || var.endpoint.tls_ca_certificate != null`, errorMessage: probed(rule, { auth: 'secret', passwordSecretArn: PROBE }, []) },
      { condition: `!(${secret}) || var.connect_arn_prefix == null`, errorMessage: probed(rule, { auth: 'secret', passwordSecretArn: PROBE, tlsCaCertificate: PROBE, connectArnPrefix: PROBE }, []) },
      { condition: `${secret} || var.connect_arn_prefix != null`, errorMessage: probed(rule, { auth: 'iam' }, []) },
      { condition: `${secret} || var.password_secret_arn == null`, errorMessage: probed(rule, { auth: 'iam', connectArnPrefix: PROBE, passwordSecretArn: PROBE }, []) },
    ];
  },
  // The variable's own validation: Terraform 1.5 lets a condition read only its variable, so the catalog is inlined.
  'pooler-instance-known': (rule) => {
    const v = 'var.instance_type';
    const known = `contains(${hclValue(POOLER_INSTANCE_FAMILIES)}, split(".", ${v})[0]) && contains(${hclValue(Object.keys(GRAVITON_SIZE_VCPUS))}, try(split(".", ${v})[1], ""))`;
    return [{ condition: `!can(regex(${hclString(GRAVITON_TYPE_PATTERN)}, ${v})) || (${known})`, errorMessage: probed(rule, { instanceType: 'zz9g.zprobez' }, [['zz9g.zprobez', v]]) }];
  },
  // A precondition of the launch template, on the module's locals: the budget per target (budget), the
  // connections it leaves (reserved_connections, from the catalog) and the server connections its
  // processes take at one each (server_connections_in).
  'fleet-budget-split': (rule) => [
    {
      condition: 'local.budget >= local.server_connections_in',
      // Probe values chosen so that each number of the message occurs once: 11 hosts of 13 vCPUs, 41% of 200.
      errorMessage: probed(rule, { hosts: 11, vcpusPerHost: 13, readers: 1, maxConnections: 200, pool: { maxConnectionsPercent: 41, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 0 } }, [
        [String(RESERVED_CONNECTIONS), 'local.reserved_connections'],
        ['143', 'local.server_connections_in'],
        ['200', 'var.max_connections'],
        ['11', 'var.hosts'],
        ['13', 'local.processes_per_target'],
        ['82', 'local.budget'],
        ['41', 'var.max_connections_percent'],
      ]),
    },
  ],
  // The same, with a session listener: the module's session_roles, and each share of the budget (session_budget,
  // transaction_budget) against what the processes take at one each.
  'fleet-session-budget-split': (rule) => [
    {
      condition: 'length(local.session_roles) == 0 || (local.session_budget >= local.server_connections_in && local.transaction_budget >= local.server_connections_in)',
      // Probe values chosen so that each number of the message occurs once: 11 hosts of 13 vCPUs, 41% of 1000, 29% of that for sessions.
      errorMessage: probed(
        rule,
        { hosts: 11, vcpusPerHost: 13, readers: 1, maxConnections: 1000, pool: { maxConnectionsPercent: 41, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 0 }, sessionRoles: ['READ_WRITE'], sessionMaxConnectionsPercent: 29 },
        [
          ['143', 'local.server_connections_in'],
          ['118', 'local.session_budget'],
          ['292', 'local.transaction_budget'],
          ['410', 'local.budget'],
          ['11', 'var.hosts'],
          ['13', 'local.processes_per_target'],
          ['29', 'var.session_max_connections_percent'],
        ],
      ),
    },
  ],
  'fleet-load-balancer-name-prefix': (rule) => [
    { condition: `!startswith(var.name, ${JSON.stringify(RESERVED_LOAD_BALANCER_PREFIX)})`, errorMessage: probed(rule, { loadBalancerName: `${RESERVED_LOAD_BALANCER_PREFIX}${PROBE}` }, [[`${RESERVED_LOAD_BALANCER_PREFIX}${PROBE}`, 'var.name']]) },
  ],
  // A validation of the variable: each user once, then at most MAX_POOLER_CONSUMER_USERS (one message at a time, as the model gives).
  'pooler-consumer-users': (rule) => {
    const users = 'var.consumer_users';
    const unique = `length(distinct(${users})) == length(${users})`;
    const repeated = `try([for i, u in ${users} : u if index(${users}, u) != i][0], "")`;
    // Probe names with no digit, so the count is the only number the probe puts in the message.
    const many = Array.from({ length: 23 }, (_, i) => `zprobe_${String.fromCharCode(97 + i)}`);
    return [
      {
        condition: unique,
        errorMessage: probed(rule, { consumerUsers: ['zprobe_a', 'zprobe_b', 'zprobe_a'] }, [
          ['zprobe_a,zprobe_b,zprobe_a', `join(",", ${users})`],
          ['zprobe_a', repeated],
        ]),
      },
      {
        condition: `!(${unique}) || length(${users}) <= ${MAX_POOLER_CONSUMER_USERS}`,
        errorMessage: probed(rule, { consumerUsers: many }, [
          [many.join(','), `join(",", ${users})`],
          [String(many.length), `length(${users})`],
        ]),
      },
    ];
  },
  'pooler-s3-egress-vpc-cidr': (rule) => {
    const prefixList = 'var.s3_prefix_list_id';
    return [
      {
        condition: `${prefixList} == null || var.vpc_cidr_block != null`,
        // The message is rendered even when the condition holds: a null prefix list shows as "null".
        errorMessage: probed(rule, { s3PrefixListId: PROBE }, [[PROBE, `${prefixList} == null ? "null" : ${prefixList}`]]),
      },
      {
        condition: `var.vpc_cidr_block == null || ${prefixList} != null`,
        errorMessage: probed(rule, { vpcCidrBlock: PROBE }, [[PROBE, 'var.vpc_cidr_block == null ? "null" : var.vpc_cidr_block']]),
      },
    ];
  },
  'pooler-tls-certificate-pair': (rule) => [
    { condition: 'var.tls_secret_arn == null || var.tls_ca_certificate != null', errorMessage: probed(rule, { tlsSecretArn: PROBE, tlsCaCertificate: null }, []) },
    { condition: 'var.tls_ca_certificate == null || var.tls_secret_arn != null', errorMessage: probed(rule, { tlsSecretArn: null, tlsCaCertificate: PROBE }, []) },
  ],
  // On the function, which exists only without tls_secret_arn; local.certificate_code is certificate_function with null for unset.
  'pooler-certificate-function': (rule) => {
    const own = 'var.tls_secret_arn != null';
    const [f, b, k] = ['local.certificate_code.filename', 'local.certificate_code.s3_bucket', 'local.certificate_code.s3_key'];
    const code = (certificateFunction: Record<string, string> | null) => ({ tlsSecretArn: null, certificateFunction });
    return [
      { condition: `${own} || ${f} != null || ${b} != null || ${k} != null`, errorMessage: probed(rule, code(null), []) },
      { condition: `${own} || ${f} == null || (${b} == null && ${k} == null)`, errorMessage: probed(rule, code({ filename: PROBE, s3_bucket: PROBE }), []) },
      { condition: `${own} || ${f} != null || (${b} == null) == (${k} == null)`, errorMessage: probed(rule, code({ s3_bucket: PROBE }), []) },
    ];
  },
  'function-code-source': lambdaCodeBlocks,
  'role-bootstrap-api-route': apiRouteBlocks(ROLE_BOOTSTRAP_APIS),
  'consumer-api-route': apiRouteBlocks(SECRET_CONSUMER_APIS, 'var.auth == "secret"'),
  'pooler-api-route': apiRouteBlocks(POOLER_HOST_APIS),
  'role-bootstrap-code-source': lambdaCodeBlocks,
  'cluster-kms-key': (rule) => [{ condition: 'var.create_kms_key || var.kms_key_arn != null', errorMessage: probed(rule, { createKmsKey: false }, []) }],
  'function-kms-key': (rule) => [{ condition: 'var.create_kms_key || var.kms_key_arn != null', errorMessage: probed(rule, { createKmsKey: false }, []) }],
};
