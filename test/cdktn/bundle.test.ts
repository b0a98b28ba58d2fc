import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CDKTN_DIR, bundleCdktnPackage } from '../../bin/build-cdktn';
import { App, TerraformStack } from './cdktn-runtime';

/**
 * The published form of packages/cdktn (make cdktn-build): one bundle carrying the kit's model, which
 * needs only cdktn and constructs from the user's installation, not this repository's lib/.
 */
describe('the cdktn bundle', () => {
  // Inside the package (dist/ is not committed) so that the bundle resolves the package's cdktn.
  const outDir = path.join(CDKTN_DIR, 'dist', `bundle-test-${process.pid}`);
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-bundle-'));
  afterAll(() => {
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.rmSync(outdir, { recursive: true, force: true });
  });

  test('GIVEN the bundle THEN it requires nothing of the repository and runs the kit\'s rules', () => {
    const bundle = bundleCdktnPackage(outDir);
    const text = fs.readFileSync(bundle, 'utf8');
    const required = [...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    expect([...new Set(required)].sort()).toEqual(['cdktn']);
    expect(text).toContain('is out of range');

    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RdsProxy } = require(bundle) as { RdsProxy: new (scope: TerraformStack, id: string, props: object) => unknown };
    const stack = new TerraformStack(new App({ outdir }), 'Orders');
    expect(
      () =>
        new RdsProxy(stack, 'Proxy', {
          name: 'orders',
          clusterIdentifier: 'orders',
          readers: 2,
          clusterSecurityGroupId: 'sg-cluster',
          clusterResourceId: 'cluster-ORDERS',
          vpcId: 'vpc-data',
          subnetIds: ['subnet-d1'],
          maxConnectionsPercent: 150,
        }),
    ).toThrow("Orders/Proxy: maxConnectionsPercent 150 is out of range: set the share of the target's max_connections the proxy may use (an integer from 1 to 100)");
  });
});
