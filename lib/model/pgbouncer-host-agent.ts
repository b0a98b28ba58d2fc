/**
 * The PgBouncer engine's host agent and packages fetcher: Python files of the kit (host/apk_host.py,
 * host/apk_aws.py; standard library only, as Debian's cloud image has Python 3 for cloud-init and no AWS CLI or
 * SDK). apk_aws.py makes the host's AWS calls, signed with Signature Version 4 from the instance role's IMDSv2
 * credentials; the user data carries it and installs it as apk-fetch (the packages object, the rollout's
 * signal). apk_host.py comes in the packages object, installed beside it (it imports it) only with the SHA-256
 * the user data pins; its commands are listed in its own docstring.
 *
 * Both honour the AWS SDKs' standard configuration where the SDKs would: credentials in the environment before
 * the instance role's, and AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> (AWS SDKs and Tools Reference Guide,
 * "Service-specific endpoints"), which a host never sets and a test points at an emulator.
 */
import { createHash } from 'node:crypto';
import { hostFile } from './pgbouncer-host-files';

/** Where the bootstrap installs the Python files; the commands are links to them (Python finds apk_aws beside). */
export const HOST_LIB_DIR = '/usr/local/lib/aurora-proxy-kit';
export const HOST_AGENT_PATH = '/usr/local/sbin/apk-host';
export const HOST_FETCH_PATH = '/usr/local/sbin/apk-fetch';
/** The files in the kit's host/ folder. */
export const HOST_AGENT_FILE = 'apk_host.py';
export const HOST_FETCH_FILE = 'apk_aws.py';

/** The fetcher's source (the user data carries it). */
export function hostFetchSource(): string {
  return hostFile(HOST_FETCH_FILE);
}

/** The agent's source, shipped in the packages object (lib/packaging/pooler-packages.ts). */
export function hostAgentSource(): string {
  return hostFile(HOST_AGENT_FILE);
}

/** The file name of the agent in the packages object. */
export const HOST_AGENT_PACKAGE_FILE = 'apk-host';

/** The SHA-256 of the agent as shipped: the user data pins it, so a host installs only this kit's agent. */
export function hostAgentSha256(): string {
  return createHash('sha256').update(hostAgentSource()).digest('hex');
}
