/**
 * `--from`: a cloud assembly directory (or its manifest.json) or `terraform show -json` output, told apart
 * by what is on disk, so `rehearse topology --from cdk.out` and `--from plan.json` both work.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { TopologyInputError } from './errors';
import { topologyFromCdkOut } from './cdk';
import { topologyFromPlan, type TerraformWorkingDir } from './plan';
import type { DeployedTopology } from './types';

/** A binary plan file is a zip archive. */
const ZIP_MAGIC = 'PK\u0003\u0004';

/** `terraform`: where a plan was made (see topologyFromPlan); unused for a cloud assembly. */
export function loadTopology(from: string, terraform?: TerraformWorkingDir): DeployedTopology {
  if (!existsSync(from)) throw new TopologyInputError(from, 'does not exist', 'pass a cloud assembly directory (cdk.out) or `terraform show -json` output (plan.json)', (f, p) => `${f} ${p}`);
  if (statSync(from).isDirectory()) return topologyFromCdkOut(from);
  if (basename(from) === 'manifest.json') return topologyFromCdkOut(dirname(from));
  const text = readFileSync(from, 'latin1');
  if (text.startsWith(ZIP_MAGIC)) throw new TopologyInputError(from, 'is a binary plan file',  `convert it first: terraform show -json ${from} > plan.json, then pass plan.json`, (f, p) => `${f} ${p}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(from, 'utf8'));
  } catch (err) {
    throw new TopologyInputError(from, `not JSON (${err instanceof Error ? err.message : String(err)})`, 'pass a cloud assembly directory (cdk.out) or `terraform show -json <planfile>` output');
  }
  return topologyFromPlan(json, from, terraform);
}
