/**
 * TLS options of the consumers' connections, one per DB_TLS mode.
 *
 * RDS Proxy serves ACM certificates that chain to Amazon Trust Services' roots and are wildcards for
 * the proxy's domain (`*.proxy-<id>.<region>.rds.amazonaws.com`). AWS's Aurora user guide (RDS Proxy,
 * "Using TLS/SSL with RDS Proxy" and "Limits for proxy endpoints") says VERIFY_IDENTITY works on the
 * proxy's default endpoint only: a custom endpoint's name,
 * `<name>.endpoint.proxy-<id>.<region>.rds.amazonaws.com`, has two labels in front of the proxy's
 * domain, so the wildcard does not cover it. `verify-proxy-domain` is the strongest check AWS allows
 * there: the chain must end at an Amazon root (not any public CA), and the certificate must be valid
 * for the proxy's own default endpoint name (DB_TLS_SERVER_NAME), which config.ts has checked is the
 * domain DB_HOST belongs to.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { checkServerIdentity, rootCertificates, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import { ENV_VARS, type TlsConfig } from './environment';
import { ConfigError } from './errors';

/**
 * Amazon Trust Services' roots, which sign the ACM certificates RDS Proxy serves
 * (https://www.amazontrust.com/repository/): Amazon Root CA 1-4 and Starfield Services Root G2.
 * Taken from Node's own bundle, so no certificate file ships with the function.
 */
const AMAZON_ROOT_SUBJECTS = [
  /^CN=Amazon Root CA [1-4]$/m,
  /^CN=Starfield Services Root Certificate Authority - G2$/m,
];

let amazonRoots: string[] | undefined;

export function amazonRootCertificates(): string[] {
  amazonRoots ??= rootCertificates.filter((pem) => {
    const subject = new X509Certificate(pem).subject;
    return AMAZON_ROOT_SUBJECTS.some((re) => re.test(subject));
  });
  return amazonRoots;
}

const caBundles = new Map<string, string>();

function readCaBundle(path: string): string {
  let pem = caBundles.get(path);
  if (pem === undefined) {
    try {
      pem = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(ENV_VARS.tlsCaFile, path, `cannot be read (${(err as Error).message}); point it at a PEM CA bundle packaged with the function.`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ConfigError(ENV_VARS.tlsCaFile, path, 'does not contain a PEM certificate.');
    }
    caBundles.set(path, pem);
  }
  return pem;
}

/**
 * The domain a proxy's endpoints share: the default endpoint's name without its first label
 * (`myproxy.proxy-abc.us-east-1.rds.amazonaws.com` -> `proxy-abc.us-east-1.rds.amazonaws.com`).
 */
export function proxyDomainOf(defaultEndpoint: string): string {
  const dot = defaultEndpoint.indexOf('.');
  return dot < 0 ? '' : defaultEndpoint.slice(dot + 1);
}

/** node-postgres `ssl` option for a DB_TLS mode. */
export function sslOptions(tls: TlsConfig): false | ConnectionOptions {
  switch (tls.mode) {
    case 'disable':
      return false;
    case 'require':
      // Encrypted but unauthenticated: config.ts only allows this with a
      // static local password, never with IAM tokens.
      return { rejectUnauthorized: false };
    case 'verify-full':
      // A private CA (the PgBouncer engine's) is the only one trusted: no public CA can stand in.
      if (tls.ca !== undefined) return { rejectUnauthorized: true, ca: [tls.ca] };
      // rejectUnauthorized checks the chain; Node's checkServerIdentity
      // (pg passes the host through) checks the name/IP against the SANs.
      // Passing `ca` replaces Node's bundled roots, so the extra bundle is
      // appended to them rather than given alone: RDS Proxy certificates
      // chain to Amazon's public roots, which are in the default set.
      return tls.caFile === undefined
        ? { rejectUnauthorized: true }
        : { rejectUnauthorized: true, ca: [...rootCertificates, readCaBundle(tls.caFile)] };
    case 'verify-proxy-domain': {
      // pg overwrites `servername` with the host but keeps checkServerIdentity, which Node calls
      // with the name it connected to; the certificate is checked against the proxy's own name instead.
      const serverName = tls.serverName!;
      const ca = tls.caFile === undefined ? amazonRootCertificates() : [...amazonRootCertificates(), readCaBundle(tls.caFile)];
      return {
        rejectUnauthorized: true,
        ca,
        checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(serverName, cert),
      };
    }
  }
}

/** Test hook: forget cached CA bundles. */
export function resetTlsCachesForTests(): void {
  caBundles.clear();
}
