/** Locates the real programs the rehearsal runs, with an install hint when one is missing. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MissingBinaryError } from './errors';

export interface Binaries {
  /** Directory of postgres, initdb, pg_basebackup (Debian keeps them off PATH). */
  readonly postgresBinDir: string;
  readonly pgbouncer: string;
  readonly haproxy?: string;
  readonly pgpool?: string;
  readonly openssl: string;
}

const APT = 'install it with `apt-get install -y';

export function onPath(program: string, extraDirs: string[] = ['/usr/sbin', '/usr/bin', '/sbin', '/usr/local/sbin', '/usr/local/bin']): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter((d) => d !== ''), ...extraDirs];
  return dirs.map((d) => join(d, program)).find((p) => existsSync(p));
}

/** PostgreSQL 15 server binaries; other majors are refused so the rehearsal matches the kit's engine. */
export function findPostgres15BinDir(): string {
  const debian = '/usr/lib/postgresql/15/bin';
  if (existsSync(join(debian, 'postgres'))) return debian;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const version = execFileSync(join(dir, 'postgres'), ['--version'], { encoding: 'utf8' });
    if (/\s15\./.test(version)) return dir;
  } catch {
    // Not there; fall through to the hint.
  }
  const found = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').join(', ') : 'none';
  throw new MissingBinaryError('PostgreSQL 15 server (postgres, initdb, pg_basebackup)', `${APT} postgresql-15\` (majors found under /usr/lib/postgresql: ${found})`);
}

/** Where `make pgbouncer` (tools/build-pgbouncer.sh) installs PgBouncer, relative to the kit's root. */
export const PGBOUNCER_BUILD_PATH = join('.cache', 'pgbouncer-1.24', 'bin', 'pgbouncer');

/** The first `.cache/pgbouncer-1.24/bin/pgbouncer` in this file's directory or one above it (the kit's root). */
function builtPgBouncer(): { found?: string; expected: string } {
  let dir = __dirname;
  let expected: string | undefined;
  for (;;) {
    const candidate = join(dir, PGBOUNCER_BUILD_PATH);
    if (existsSync(candidate)) return { found: candidate, expected: candidate };
    // The kit's root is where package.json is; name that path when nothing is found.
    if (expected === undefined && existsSync(join(dir, 'package.json'))) expected = candidate;
    if (dirname(dir) === dir) return { expected: expected ?? join(__dirname, PGBOUNCER_BUILD_PATH) };
    dir = dirname(dir);
  }
}

/**
 * PgBouncer 1.24, as `make pgbouncer` builds it from Debian 13's source package. Debian 12's own
 * pgbouncer (1.18) is not used: it has no peering of cancel requests across so_reuseport processes
 * and no prepared statements in transaction pooling.
 */
export function findPgBouncer(): string {
  const { found, expected } = builtPgBouncer();
  const hint = `build it with \`make pgbouncer\` (Debian trixie's source package into .cache/pgbouncer-1.24); Debian 12's pgbouncer package is 1.18, which lacks so_reuseport peering and prepared statements in transaction pooling`;
  if (found === undefined) throw new MissingBinaryError(`PgBouncer 1.24 (${expected})`, hint);
  let version = '';
  try {
    version = execFileSync(found, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 }).split('\n')[0] ?? '';
  } catch (err) {
    version = (err as Error).message;
  }
  if (!/^PgBouncer 1\.24\./.test(version)) throw new MissingBinaryError(`PgBouncer 1.24 (${found} reports "${version.trim()}")`, hint);
  return found;
}

export function findBinaries(options: { peers: boolean }): Binaries {
  const need = (program: string, pkg: string): string => {
    const path = onPath(program);
    if (path === undefined) throw new MissingBinaryError(program, `${APT} ${pkg}\` (or \`make system-deps\`)`);
    return path;
  };
  const postgresBinDir = findPostgres15BinDir();
  return {
    postgresBinDir,
    pgbouncer: findPgBouncer(),
    openssl: need('openssl', 'openssl'),
    ...(options.peers ? { haproxy: need('haproxy', 'haproxy'), pgpool: need('pgpool', 'pgpool2') } : {}),
  };
}
