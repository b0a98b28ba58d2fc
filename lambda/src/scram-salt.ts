/**
 * SCRAM-SHA-256 verifiers with a salt derived from the secret, for the PgBouncer engine: the hosts'
 * auth file and the role on Aurora must hold the same verifier (PgBouncer logs in to the server with the
 * client's own SCRAM keys), and both are computed independently, by each host (pgbouncer-host-agent.ts,
 * Python) and by the role bootstrap (this function), from the same secret. The salt is HMAC-SHA-256 of
 * the user name keyed by the password, so it is unique per secret as a random salt would be; secrets are
 * random, so equal verifiers for different users cannot happen in practice.
 */
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';

/** Mixed into every derived salt, so the salt is of this use only. */
export const SCRAM_SALT_CONTEXT = 'aurora-proxy-kit scram salt ';
/** PostgreSQL's default SCRAM iteration count (scram_iterations). */
export const DERIVED_SCRAM_ITERATIONS = 4096;

/** `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, PostgreSQL's pg_authid format. */
export function derivedScramVerifier(user: string, password: string, iterations = DERIVED_SCRAM_ITERATIONS): string {
  const normalized = Buffer.from(password.normalize('NFKC'));
  const salt = createHmac('sha256', normalized).update(Buffer.concat([Buffer.from(SCRAM_SALT_CONTEXT), Buffer.from(user)])).digest().subarray(0, 16);
  const salted = pbkdf2Sync(normalized, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
