/**
 * The code each consumer deploys, as the topology reader finds it in a cloud assembly: the asset directory
 * `cdk synth` staged for the function (what the rehearsal runs under the Lambda runtime emulator), or none
 * when the assembly was synthesized without its bundles.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDeploymentContext } from '../../lib/reference-app/app-context';
import { ReferenceDeployment } from '../../lib/reference-app/reference-deployment';
import { deploymentFromTopology, loadTopology } from '../../lib/rehearsal';
import { removeFixtures, synthesize, synthesizeReferenceApp } from './topology-fixtures';
import { BUNDLING } from '../helpers/cdk';

afterAll(() => removeFixtures());

describe('the consumers\' code in a cloud assembly', () => {
  test('GIVEN the reference app synthesized with its bundles built WHEN read THEN each consumer names its own staged asset and handler', () => {
    const dir = synthesize((app) => {
      const settings = readDeploymentContext(app);
      new ReferenceDeployment(app, settings.stackName, settings);
    }, BUNDLING);
    const topology = loadTopology(dir);
    const codes = topology.consumers.map((c) => c.code);
    expect(codes).toHaveLength(2);
    for (const code of codes) {
      expect(code?.path).toMatch(new RegExp(`^${dir}/asset\\.[0-9a-f]{64}$`));
      expect(code?.handler).toBe('index.handler');
      expect(existsSync(join(code!.path, 'index.js'))).toBe(true);
    }
    // Each is its own bundle: the reader's exports the read handler, the writer's the write handler.
    expect(new Set(codes.map((c) => c!.path)).size).toBe(2);
    const writer = topology.consumers.find((c) => c.connection.endpointRole === 'READ_WRITE')!;
    expect(readFileSync(join(writer.code!.path, 'index.js'), 'utf8')).toContain('INSERT INTO');
    // WHEN reduced to the rehearsed deployment THEN the consumers carry it
    const deployment = deploymentFromTopology(topology, dir);
    expect(deployment.consumers.map((c) => [c.role, c.code, c.functionHandler])).toEqual(topology.consumers.map((c) => [c.connection.endpointRole, c.code!.path, 'index.handler']));
  }, 120_000);

  test('GIVEN an assembly synthesized without its bundles WHEN read THEN no consumer names code', () => {
    const { dir } = synthesizeReferenceApp();
    expect(loadTopology(dir).consumers.map((c) => c.code)).toEqual([undefined, undefined]);
  }, 120_000);
});
