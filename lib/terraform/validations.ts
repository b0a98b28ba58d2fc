import {
  DEFAULT_ALARM_THRESHOLDS,
  INSTANCE_CLASS_CATALOG,
  MAX_POOLER_CONSUMER_USERS,
  RESERVED_LOAD_BALANCER_PREFIX,
  MAX_PROXY_ENDPOINTS,
  OPTIMIZED_READS_FAMILIES,
  OPTIMIZED_READS_MIN_MAJOR,
  RESERVED_CONNECTIONS,
  type CustomRule,
  AWS_APIS,
  type AwsApiName,
  POOLER_HOST_APIS,
  ROLE_BOOTSTRAP_APIS,
  SECRET_CONSUMER_APIS,
  unknownEngineVersionWarning,
} from '../model';
import { GRAVITON_SIZE_VCPUS, GRAVITON_TYPE_PATTERN, POOLER_INSTANCE_FAMILIES } from '../model/pgbouncer-hosts';
import { RESERVED_ROLE_PREFIXES, ROLE_NAME_PATTERN } from '../../lambda/src/role-bootstrap-request';
import { consumerEnvironmentRegion } from './environment';
import { POOL_SETTINGS_MODULES, POOL_VARIABLES, poolSettingsRegion } from './pool-variables';
import type { Region } from './regions';
import { hclString, hclTemplate, hclValue, slot } from './hcl';
import { type ModuleRule, expressionOf, moduleSpec, preconditionOf, rulesOf, variableOf } from './modules';

type ValueRule = Exclude<ModuleRule, CustomRule<Record<string, unknown>>>;

interface Block {
  readonly condition: string;
  readonly errorMessage: string;
}

const RULES_SOURCE = 'lib/model/rules.ts';

function validationLines(blocks: ReadonlyArray<Block>): string[] {
  return blocks.flatMap((b) => ['', '  validation {', `    condition     = ${b.condition}`, `    error_message = ${b.errorMessage}`, '  }']);
}

/** A precondition in a resource's `lifecycle` block, or (`indent` two spaces) directly in an output. */
function preconditionLines(block: Block, indent = '    '): string[] {
  return [`${indent}precondition {`, `${indent}  condition     = ${block.condition}`, `${indent}  error_message = ${block.errorMessage}`, `${indent}}`];
}

const not = (condition: string) => (condition.startsWith('(') ? `!${condition}` : `!(${condition})`);

/** The HCL condition that a value rule accepts `x`. */
export function acceptsHcl(rule: ValueRule, x: string): string {
  switch (rule.kind) {
    case 'integer-range':
      return `floor(${x}) == ${x} && ${x} >= ${rule.min} && ${x} <= ${rule.max}`;
    case 'one-of':
      return `contains(${hclValue(rule.values)}, ${x})`;
    case 'pattern': {
      const hyphens = rule.noDoubleOrTrailingHyphen ? ` && !strcontains(${x}, "--") && !endswith(${x}, "-")` : '';
      return `(can(regex(${hclString(rule.pattern)}, ${x}))${hyphens})`;
    }
    case 'percentage':
      return `${x} > 0 && ${x} <= 100`;
    case 'non-negative':
      return `${x} >= 0`;
  }
}

const isValue = (rule: ModuleRule): rule is ValueRule => rule.kind !== 'custom';

/** The HCL expression a property's plain name reads: the variable, or its number of elements (ModuleSpec.lengths). */
function valueExpression(module: string, name: string): string {
  const x = expressionOf(name)!;
  return moduleSpec(module).lengths?.includes(name) ? `length(${x})` : x;
}

/**
 * The validation blocks of a value rule, by the variable each belongs to: one block per variable. A
 * property inside a collection (`endpoints key`, `consumer_users item`) is checked for every element.
 */
function valueRuleBlocks(module: string, rule: ValueRule): Array<{ variable: string; block: Block }> {
  const names = rule.terraform.names;
  const byVariable = new Map<string, string[]>();
  for (const p of rule.properties) byVariable.set(variableOf(names[p]), [...(byVariable.get(variableOf(names[p])) ?? []), p]);
  return [...byVariable].map(([variable, properties]) => ({ variable, block: valueBlock(module, rule, properties) }));
}

function valueBlock(module: string, rule: ValueRule, properties: ReadonlyArray<string>): Block {
  const names = rule.terraform.names;
  const collection = moduleSpec(module).collections?.[names[properties[0]]];
  if (collection) {
    const ok = acceptsHcl(rule, collection.value);
    return {
      condition: `alltrue([for ${collection.each} : ${ok}])`,
      errorMessage: hclTemplate(rule.message(names[properties[0]], slot(0)), [`try([for ${collection.each} : ${collection.value} if ${not(ok)}][0], "")`]),
    };
  }
  if (properties.length > 1) {
    // One rule over several attributes: each is checked and every failing one reported.
    const map = `{ ${properties.map((p) => `${hclString(names[p])} = ${valueExpression(module, names[p])}`).join(', ')} }`;
    const ok = acceptsHcl(rule, 'v');
    return {
      condition: `alltrue([for k, v in ${map} : ${ok}])`,
      errorMessage: `join("\\n", [for k, v in ${map} : ${hclTemplate(rule.message(slot(0), slot(1)), ['k', 'v'])} if ${not(ok)}])`,
    };
  }
  const x = valueExpression(module, names[properties[0]]);
  const message = rule.message(names[properties[0]], slot(0));
  // HCL's || does not short-circuit, and the message is rendered even when the condition holds.
  return rule.terraform.nullable
    ? { condition: `${x} == null ? true : (${acceptsHcl(rule, x)})`, errorMessage: hclTemplate(message, [`${x} == null ? "null" : ${x}`]) }
    : { condition: acceptsHcl(rule, x), errorMessage: hclTemplate(message, [x]) };
}

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
const CUSTOM_BLOCKS: Readonly<Record<string, (rule: ModuleRule) => Block[]>> = {
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

/**
 * The regions of a rule: its precondition in main.tf, or its validation in the variable it reads. A value
 * rule over properties of several variables has a validation in each, the first region named by the
 * rule's id and the others `<id>-<variable>`.
 */
function ruleRegions(module: string, rule: ModuleRule): Region[] {
  const precondition = preconditionOf(module, rule.id);
  const indent = precondition?.address.startsWith('output.') ? '  ' : '    ';
  const region = (id: string, blocks: Block[]): Region => ({
    module,
    file: precondition?.file ?? 'variables.tf',
    id,
    source: RULES_SOURCE,
    lines: precondition ? blocks.flatMap((b) => preconditionLines(b, indent)) : validationLines(blocks),
  });
  if (isValue(rule) && !precondition) {
    return valueRuleBlocks(module, rule).map(({ variable, block }, i) => region(i === 0 ? rule.id : `${rule.id}-${variable.replace(/_/g, '-')}`, [block]));
  }
  const blocks = isValue(rule) ? valueRuleBlocks(module, rule).map((b) => b.block) : CUSTOM_BLOCKS[rule.id]?.(rule);
  if (!blocks) throw new Error(`rule ${rule.id} of ${module} has no HCL renderer`);
  return [region(rule.id, blocks)];
}

const snakeOf = (name: string) => name.replace(/^thresholds\./, '');

/** The dashboard's whole `thresholds` variable: its keys and defaults, and the threshold rules. */
function thresholdsRegion(rules: ReadonlyArray<ModuleRule>): Region {
  const names = Object.assign({}, ...rules.map((r) => r.terraform.names)) as Record<string, string>;
  const keys = Object.keys(DEFAULT_ALARM_THRESHOLDS) as Array<keyof typeof DEFAULT_ALARM_THRESHOLDS>;
  const pad = Math.max(...keys.map((k) => snakeOf(names[k]).length));
  return {
    module: 'dashboard',
    file: 'variables.tf',
    id: 'thresholds',
    source: 'lib/model/metrics.ts and rules.ts',
    lines: [
      'variable "thresholds" {',
      '  description = "Alarm thresholds; any left out take the kit\'s defaults (DEFAULT_ALARM_THRESHOLDS of lib/model)."',
      '  type = object({',
      ...keys.map((k) => `    ${snakeOf(names[k]).padEnd(pad)} = optional(number, ${DEFAULT_ALARM_THRESHOLDS[k]})`),
      '  })',
      '  default  = {}',
      '  nullable = false',
      ...validationLines(rules.filter(isValue).flatMap((r) => valueRuleBlocks('dashboard', r).map((b) => b.block))),
      '}',
    ],
  };
}

/** The cluster's warning, as the CDK construct's annotation, for a version the rules accept but the catalog does not list. */
function engineVersionOfferedRegion(): Region {
  return {
    module: 'aurora-optimized-reads',
    file: 'main.tf',
    id: 'engine-version-offered',
    source: RULES_SOURCE,
    lines: [
      'check "engine_version_offered" {',
      '  assert {',
      '    condition     = contains(local.offered_engine_versions, var.engine_version)',
      `    error_message = ${hclTemplate(unknownEngineVersionWarning(slot(0), 'engine_version'), ['var.engine_version'])}`,
      '  }',
      '}',
    ],
  };
}

export function moduleRegions(module: string): Region[] {
  const rules = rulesOf(module);
  const thresholdRules = rules.filter((r) => variableOf(r.terraform.names[r.properties[0]]) === 'thresholds');
  // Both proxies' pool variables are declared whole (pool-variables.ts), with the validations of the rules that check only them.
  const poolVariables = new Set<string>(POOL_SETTINGS_MODULES.includes(module) ? Object.values(POOL_VARIABLES) : []);
  const poolRules = rules.filter((r): r is ValueRule => isValue(r) && !preconditionOf(module, r.id) && valueRuleBlocks(module, r).every((b) => poolVariables.has(b.variable)));
  const poolValidations = (variable: string) => validationLines(poolRules.flatMap((r) => valueRuleBlocks(module, r)).filter((b) => b.variable === variable).map((b) => b.block));
  return [
    ...(poolVariables.size > 0 ? [poolSettingsRegion(module, poolValidations)] : []),
    ...rules.filter((r) => !thresholdRules.includes(r) && !(poolRules as ModuleRule[]).includes(r)).flatMap((r) => ruleRegions(module, r)),
    ...(thresholdRules.length > 0 ? [thresholdsRegion(thresholdRules)] : []),
    ...(module === 'aurora-optimized-reads' ? [engineVersionOfferedRegion()] : []),
    ...(module === 'lambda-consumer' ? [consumerEnvironmentRegion()] : []),
  ];
}
