import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** A fresh password for a rehearsal login: 18 random bytes, base64url. */
export function newPassword(): string {
  return randomBytes(18).toString('base64url');
}

/** PostgreSQL's default SCRAM iteration count (scram_iterations). */
export const SCRAM_ITERATIONS = 4096;

/**
 * A SCRAM-SHA-256 verifier in PostgreSQL's `pg_authid.rolpassword` format (RFC 5802/7677):
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`.
 *
 * The rehearsal sets a role's password to this verifier and gives PgBouncer the same verifier in its
 * auth file. PgBouncer then checks client logins with HMACs only, instead of recomputing the 4,096
 * PBKDF2 rounds from a plain-text password at every connection, and logs in to the server with the
 * keys of the client's own SCRAM exchange (this needs the verifier to be identical on both sides).
 */
export function scramSha256Verifier(password: string, salt: Buffer = randomBytes(16), iterations = SCRAM_ITERATIONS): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
