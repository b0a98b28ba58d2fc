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
import type { AwsNames } from './aws-names';
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

/** A server certificate for the rehearsal CA to sign. */
export interface CertificateRequest {
  /** File stem: the certificate is `<dir>/<file>.crt`, its key `<dir>/<file>.key`. */
  readonly file: string;
  readonly commonName: string;
  /** subjectAltNames: IP addresses become IP SANs, anything else (wildcards included) a DNS SAN. */
  readonly names: ReadonlyArray<string>;
}

export interface IssuedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface CertificateSet {
  readonly caFile: string;
  readonly certificates: Readonly<Record<string, IssuedCertificate>>;
}

const CERT_FILE_STEM = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * One CA in `dir` (`ca.crt`, as tlsPaths names it) and a certificate per request, all signed before
 * the CA key is dropped, so servers with different names (a proxy, each instance) chain to one CA a
 * client trusts, and nothing else is ever signed by it.
 */
export async function issueCertificates(dir: string, requests: ReadonlyArray<CertificateRequest>, user: OsUser | undefined, openssl = 'openssl'): Promise<CertificateSet> {
  const stems = requests.map((r) => r.file);
  const bad = stems.filter((s, i) => !CERT_FILE_STEM.test(s) || s === 'ca' || stems.indexOf(s) !== i);
  if (requests.length === 0 || bad.length > 0) {
    throw new Error(`certificate requests: file ${JSON.stringify(bad[0] ?? '')} is not a unique file stem other than "ca" (lower-case letters, digits, . _ -), or there is no request`);
  }
  const caFile = tlsPaths(dir).caFile;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const run = (args: string[]): Promise<unknown> => execFileAsync(openssl, args, { cwd: dir, timeout: 15000 });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const certificates: Record<string, IssuedCertificate> = {};
  try {
    await run(['req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', caFile, '-days', '30', '-subj', '/CN=aurora-proxy-kit rehearsal CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    for (const request of requests) {
      const certFile = join(dir, `${request.file}.crt`);
      const keyFile = join(dir, `${request.file}.key`);
      const sans = [...new Set(request.names.map((n) => (isIP(n) === 0 ? `DNS:${n}` : `IP:${n}`)))];
      // -subj takes / and = as separators: a name never contains them (host names, wildcards, addresses).
      await run(['req', ...ecKey, '-keyout', keyFile, '-out', `${request.file}.csr`, '-subj', `/CN=${request.commonName}`]);
      writeFileSync(join(dir, `${request.file}.ext`), [`subjectAltName=${sans.join(',')}`, 'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', ''].join('\n'));
      await run(['x509', '-req', '-in', `${request.file}.csr`, '-CA', caFile, '-CAkey', 'ca.key', '-CAcreateserial', '-out', certFile, '-days', '30', '-extfile', `${request.file}.ext`]);
      rmSync(join(dir, `${request.file}.csr`), { force: true });
      chmodSync(keyFile, 0o600);
      chownTo(user, keyFile);
      certificates[request.file] = { certFile, keyFile };
    }
  } finally {
    rmSync(join(dir, 'ca.key'), { force: true });
  }
  return { caFile, certificates };
}

export interface AwsShapedCertificates {
  readonly names: AwsNames;
  readonly proxy: string;
  readonly cluster: string;
  readonly instances: ReadonlyArray<string>;
  /** More names (e.g. addresses for control connections by IP) per instance. */
  readonly extraInstanceNames?: Readonly<Record<string, ReadonlyArray<string>>>;
}

/**
 * Requests for certificates shaped like AWS's:
 * - `proxy`: RDS Proxy's ACM certificate, a wildcard for the proxy's domain and nothing else
 *   (`*.proxy-<id>.<region>.rds.amazonaws.com`), so verify-full holds on the default endpoint only
 *   (lambda/src/tls.ts cites the Aurora User Guide's "Using TLS/SSL with RDS Proxy");
 * - `instance-<name>`: an instance's certificate, its instance endpoint as common name, as the Aurora
 *   User Guide says RDS issues them ("TLS connections to Aurora MySQL DB clusters": the DB instance
 *   endpoint is the CN, so the cluster endpoint verifies only for clients that read subjectAltNames),
 *   and the cluster and reader endpoints among its SANs (a failover can make any instance the writer).
 */
export function awsShapedCertificateRequests(spec: AwsShapedCertificates): CertificateRequest[] {
  const wildcard = spec.names.proxyWildcard(spec.proxy);
  const clusterNames = [spec.names.clusterEndpoint(spec.cluster), spec.names.readerEndpoint(spec.cluster)];
  return [
    { file: 'proxy', commonName: wildcard, names: [wildcard] },
    ...spec.instances.map((instance) => {
      const endpoint = spec.names.instanceEndpoint(instance);
      return { file: `instance-${instance}`, commonName: endpoint, names: [endpoint, ...clusterNames, ...(spec.extraInstanceNames?.[instance] ?? [])] };
    }),
  ];
}
