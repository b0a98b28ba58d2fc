import { PoolingProxy, type PoolingProxyProps, RdsProxy } from '../../packages/cdktn/src';
import { Testing, TerraformStack } from './cdktn-runtime';

/**
 * modules/pooling-proxy became modules/rds-proxy, and its cdktn class PoolingProxy became RdsProxy
 * (docs/DECISIONS.md, "One name per thing"): an app still written with PoolingProxy synthesizes the module
 * block RdsProxy gives, at the same address (the construct id), so its state does not move.
 */

const PROPS: PoolingProxyProps = {
  name: 'orders',
  clusterIdentifier: 'orders',
  readers: 2,
  clusterSecurityGroupId: 'sg-cluster',
  clusterResourceId: 'cluster-ORDERS',
  vpcId: 'vpc-data',
  subnetIds: ['subnet-d1', 'subnet-d2'],
  endpoints: { 'orders-ro': { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] } },
};

/** The stack's Terraform JSON with one proxy made by `make`. */
function synthesized(make: (stack: TerraformStack) => RdsProxy): { module: Record<string, Record<string, unknown>>; output: Record<string, { value: string }> } {
  const stack = new TerraformStack(Testing.app(), 'Orders');
  make(stack);
  return JSON.parse(Testing.synth(stack)) as never;
}

describe('the deprecated cdktn class PoolingProxy', () => {
  test('GIVEN an app written with PoolingProxy WHEN synthesized THEN its module block is RdsProxy\'s: same address, source modules/rds-proxy, same inputs', () => {
    // GIVEN
    const expected = synthesized((stack) => new RdsProxy(stack, 'Proxy', PROPS));

    // WHEN
    const json = synthesized((stack) => new PoolingProxy(stack, 'Proxy', PROPS));

    // THEN
    expect(Object.keys(json.module)).toEqual(['Proxy']);
    expect(json.module.Proxy.source).toBe(RdsProxy.DEFAULT_SOURCE);
    expect(RdsProxy.DEFAULT_SOURCE).toMatch(/\/\/modules\/rds-proxy\?ref=/);
    expect(json).toEqual(expected);
  });

  test('GIVEN PoolingProxy with a bad input THEN it runs RdsProxy\'s rules, naming the prop', () => {
    // GIVEN
    const stack = new TerraformStack(Testing.app(), 'Orders');

    // WHEN / THEN
    expect(() => new PoolingProxy(stack, 'Proxy', { ...PROPS, maxConnectionsPercent: 150 })).toThrow(/maxConnectionsPercent 150 is out of range/);
  });
});
