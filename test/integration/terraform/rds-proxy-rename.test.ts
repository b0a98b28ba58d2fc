import * as path from 'path';
import { ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * modules/pooling-proxy became modules/rds-proxy (docs/DECISIONS.md, "One name per thing"). A state made with
 * the former module keeps every object: the examples, which now call modules/rds-proxy under the same module
 * name, plan no move and no replacement; a configuration that still calls modules/pooling-proxy (now a wrapper
 * of rds-proxy) has each object moved into the wrapped module and updated in place.
 */

const AWS = 'provider["registry.terraform.io/hashicorp/aws"]';

/** A resource of modules/pooling-proxy as it made them: type, name, and its instance keys (none: a single instance). */
type Former = readonly [type: string, name: string, keys?: ReadonlyArray<number | string>];

/** What modules/pooling-proxy made for `endpoints`, with the IAM policy when it had database users and the endpoints' ingress keys. */
function formerProxy(endpoints: ReadonlyArray<string>, options: { connect: boolean; ingress?: ReadonlyArray<string> }): Former[] {
  return [
    ['aws_security_group', 'proxy'],
    ['aws_vpc_security_group_egress_rule', 'proxy_to_cluster'],
    ['aws_vpc_security_group_ingress_rule', 'cluster_from_proxy'],
    ['aws_iam_role', 'proxy'],
    ...(options.connect ? [['aws_iam_role_policy', 'connect', [0]] as const] : []),
    ['aws_db_proxy', 'this'],
    ['aws_db_proxy_default_target_group', 'this'],
    ['aws_db_proxy_target', 'cluster'],
    ['aws_security_group', 'endpoint', endpoints],
    ...(options.ingress ? [['aws_vpc_security_group_ingress_rule', 'endpoint', options.ingress] as const] : []),
    ['aws_db_proxy_endpoint', 'this', endpoints],
  ];
}

const key = (k: number | string): string => (typeof k === 'number' ? `[${k}]` : `["${k}"]`);

/** Every instance address of the former resources inside `module`. */
function addresses(module: string, former: ReadonlyArray<Former>): string[] {
  return former.flatMap(([type, name, keys]) => (keys ? keys.map((k) => `${module}.${type}.${name}${key(k)}`) : [`${module}.${type}.${name}`])).sort();
}

/** Attributes the modules' outputs and their callers' validations read at plan beyond the id, by resource type. */
const READ_AT_PLAN: Readonly<Record<string, Record<string, string>>> = {
  aws_db_proxy: { arn: 'arn:aws:rds:us-east-1:111111111111:db-proxy:prx-0123456789abcdef0', endpoint: 'kit.proxy-abc.us-east-1.rds.amazonaws.com' },
  aws_db_proxy_endpoint: { endpoint: 'kit-ro.endpoint.proxy-abc.us-east-1.rds.amazonaws.com' },
};

/** The former resources as state (version 4) entries: ids and what outputs read (plan does not refresh). */
function state(module: string, former: ReadonlyArray<Former>): Array<Record<string, unknown>> {
  return former.map(([type, name, keys]) => ({
    module,
    mode: 'managed',
    type,
    name,
    provider: AWS,
    ...(keys ? { each: typeof keys[0] === 'number' ? 'list' : 'map' } : {}),
    instances: (keys ?? [undefined]).map((k) => ({ ...(k === undefined ? {} : { index_key: k }), schema_version: 0, attributes: { id: `${type}-${name}-${k ?? 'single'}`, ...READ_AT_PLAN[type] } })),
  }));
}

describe('modules/rds-proxy: state made by modules/pooling-proxy', () => {
  const dirs: TerraformDir[] = [];
  const dir = (relative: string): TerraformDir => {
    const d = new TerraformDir(path.join(ROOT, relative));
    dirs.push(d);
    return d;
  };

  afterAll(() => dirs.forEach((d) => d.dispose()));

  test.each([
    ['modules/examples/minimal', formerProxy(['minimal-ro'], { connect: false })],
    ['modules/examples/complete', formerProxy(['aurora-proxy-kit-ro', 'aurora-proxy-kit-rw'], { connect: true })],
  ])('GIVEN %s\'s proxy resources at the addresses modules/pooling-proxy gave them WHEN planned on modules/rds-proxy THEN none moves, and each is kept: none destroyed or created', (example, former) => {
    // GIVEN a state holding what the former module made in module.proxy
    const formerAddresses = addresses('module.proxy', former);

    // WHEN the example, now on modules/rds-proxy, is planned against it
    const changes = dir(example).changesFrom(state('module.proxy', former));

    // THEN every former object is planned at its own address, none moved, replaced, destroyed or created
    const proxyChanges = changes.filter((c) => c.address.startsWith('module.proxy.') && !c.address.startsWith('module.proxy.data.'));
    expect(proxyChanges.map((c) => c.address).sort()).toEqual(formerAddresses);
    for (const c of proxyChanges) expect({ address: c.address, from: c.from, actions: c.actions.filter((a) => a === 'create' || a === 'delete') }).toEqual({ address: c.address, from: undefined, actions: [] });
  }, 300_000);

  test('GIVEN a configuration still calling modules/pooling-proxy and its state from before WHEN planned THEN each object moves into module.rds_proxy and is updated in place, none replaced', () => {
    // GIVEN
    const former = formerProxy(['former-ro'], { connect: true, ingress: ['former-ro/0'] });

    // WHEN
    const moved = dir('test/terraform/fixtures/former-pooling-proxy').movesFrom(state('module.proxy', former));

    // THEN
    const expected = addresses('module.proxy', former).map((from) => [from, from.replace(/^module\.proxy\./, 'module.proxy.module.rds_proxy.')]);
    expect(moved.map(([from, to]) => [from, to])).toEqual(expected);
    for (const [from, , actions] of moved) expect({ from, actions }).toEqual({ from, actions: ['update'] });
  }, 300_000);
});
