/** Where the booted hosts' tools are: the image's root (tools/host-image/build-root.sh) and the IMDS mock. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MissingBinaryError } from '../errors';

const KIT_ROOT = join(__dirname, '..', '..', '..');

/** AWS's amazon-ec2-metadata-mock, built from the Go module proxy by `make host-tools`. */
export const IMDS_MOCK_VERSION = 'v1.13.0';
export const IMDS_MOCK_PATH = join(KIT_ROOT, '.cache', 'bin', 'ec2-metadata-mock');

export function findImdsMock(): string {
  if (!existsSync(IMDS_MOCK_PATH)) throw new MissingBinaryError(`amazon-ec2-metadata-mock ${IMDS_MOCK_VERSION} (${IMDS_MOCK_PATH})`, 'build it with `make host-tools`');
  return IMDS_MOCK_PATH;
}

/** The Debian 13 root the hosts boot, built (or found in its cache) by tools/host-image/build-root.sh. */
export function hostImageRoot(timeoutMs = 600_000): string {
  const out = execFileSync('bash', [join(KIT_ROOT, 'tools', 'host-image', 'build-root.sh')], { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').pop() ?? '';
}
