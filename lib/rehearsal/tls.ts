/**
 * The rehearsal's certificates: a throwaway CA and one server certificate whose subjectAltNames cover
 * every endpoint and instance address, so clients can use verify-full (DB_TLS=verify-full with
 * DB_TLS_CA_FILE) against any of them, as they do against RDS Proxy.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tlsPaths } from './layout';
import { chownTo, type OsUser } from './os-user';

const execFileAsync = promisify(execFile);

export interface TlsFiles {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** Name clients verify the certificate against when it names no address (default: the address). */
  readonly serverName?: string;
}

/**
 * A CA and a server certificate in `dir` (file names: tlsPaths) for `names`: IP addresses become IP
 * SANs, anything else a DNS SAN, so a certificate can be shaped like RDS Proxy's (a wildcard
 * `*.proxy-<id>.<region>.rds.amazonaws.com`); DNS:localhost is always among them.
 */
export async function generateTls(dir: string, names: ReadonlyArray<string>, user: OsUser | undefined, openssl = 'openssl'): Promise<TlsFiles> {
  const paths = tlsPaths(dir);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const run = (args: string[]): Promise<unknown> => execFileAsync(openssl, args, { cwd: dir, timeout: 15000 });
  // P-256 keys: generated in milliseconds, unlike RSA.
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(['req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', paths.caFile, '-days', '30', '-subj', '/CN=aurora-proxy-kit rehearsal CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await run(['req', ...ecKey, '-keyout', paths.keyFile, '-out', 'server.csr', '-subj', '/CN=aurora-proxy-kit rehearsal']);
  const sans = [...new Set([...names.map((n) => (isIP(n) === 0 ? `DNS:${n}` : `IP:${n}`)), 'DNS:localhost'])];
  writeFileSync(join(dir, 'server.ext'), [`subjectAltName=${sans.join(',')}`, 'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', ''].join('\n'));
  await run(['x509', '-req', '-in', 'server.csr', '-CA', paths.caFile, '-CAkey', 'ca.key', '-CAcreateserial', '-out', paths.certFile, '-days', '30', '-extfile', 'server.ext']);
  // Nothing else is ever signed with this CA; dropping its key keeps it that way.
  rmSync(join(dir, 'ca.key'), { force: true });
  // PostgreSQL refuses a key readable by others or not owned by the server user.
  chmodSync(paths.keyFile, 0o600);
  chownTo(user, paths.keyFile);
  return { caFile: paths.caFile, certFile: paths.certFile, keyFile: paths.keyFile };
}
