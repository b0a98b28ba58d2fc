/**
 * The OS user the servers run as. PostgreSQL and PgBouncer refuse to run as root, so as root every
 * server is spawned with the `postgres` user's uid/gid and its files are chowned to it; as another
 * user, the servers simply run as that user.
 */
import { execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { MissingBinaryError } from './errors';

export interface OsUser {
  readonly uid: number;
  readonly gid: number;
}

export function serverOsUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new MissingBinaryError("the 'postgres' OS user", 'running as root, the servers run as postgres; `apt-get install -y postgresql-15` creates it (or run as a non-root user)');
  }
}

export function chownTo(user: OsUser | undefined, ...paths: string[]): void {
  if (user === undefined) return;
  for (const p of paths) chownSync(p, user.uid, user.gid);
}
