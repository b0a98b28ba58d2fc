/** Locates the real programs the rehearsal runs, with an install hint when one is missing. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PGBOUNCER_MINIMUM_VERSION, versionAtLeast } from '../packaging/pgbouncer-build';
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
export const PGBOUNCER_BUILD_PATH = join('.cache', 'pgbouncer', 'bin', 'pgbouncer');

/** The first `.cache/pgbouncer/bin/pgbouncer` in this file's directory or one above it (the kit's root). */
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
 * The kit's PgBouncer (PGBOUNCER_MINIMUM_VERSION or later), as `make pgbouncer` builds it, the same the
 * hosts install. Debian 12's own pgbouncer (1.18) is not used: it has no peering of cancel requests across
 * so_reuseport processes, no prepared statements in transaction pooling, and none of 1.25.2's CVE fixes.
 */
export function findPgBouncer(): string {
  const { found, expected } = builtPgBouncer();
  const wanted = `PgBouncer ${PGBOUNCER_MINIMUM_VERSION} or later`;
  const hint = `build it with \`make pgbouncer\` (the kit's source and patches into .cache/pgbouncer); Debian 12's pgbouncer package is 1.18, which lacks so_reuseport peering, prepared statements in transaction pooling and 1.25.2's CVE fixes`;
  if (found === undefined) throw new MissingBinaryError(`${wanted} (${expected})`, hint);
  let version = '';
  try {
    version = execFileSync(found, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 }).split('\n')[0] ?? '';
  } catch (err) {
    version = (err as Error).message;
  }
  const reported = /^PgBouncer (\S+)/.exec(version)?.[1];
  if (reported === undefined || !versionAtLeast(reported, PGBOUNCER_MINIMUM_VERSION)) throw new MissingBinaryError(`${wanted} (${found} reports "${version.trim()}")`, hint);
  return found;
}

export function findBinaries(options: { comparisonProxies: boolean }): Binaries {
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
    ...(options.comparisonProxies ? { haproxy: need('haproxy', 'haproxy'), pgpool: need('pgpool', 'pgpool2') } : {}),
  };
}
