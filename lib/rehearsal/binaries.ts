/** Locates the real programs the rehearsal runs, with an install hint when one is missing. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
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

function onPath(program: string, extraDirs: string[] = ['/usr/sbin', '/usr/bin', '/sbin', '/usr/local/sbin', '/usr/local/bin']): string | undefined {
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

export function findBinaries(options: { peers: boolean }): Binaries {
  const need = (program: string, pkg: string): string => {
    const path = onPath(program);
    if (path === undefined) throw new MissingBinaryError(program, `${APT} ${pkg}\` (or \`make system-deps\`)`);
    return path;
  };
  const postgresBinDir = findPostgres15BinDir();
  return {
    postgresBinDir,
    pgbouncer: need('pgbouncer', 'pgbouncer'),
    openssl: need('openssl', 'openssl'),
    ...(options.peers ? { haproxy: need('haproxy', 'haproxy'), pgpool: need('pgpool', 'pgpool2') } : {}),
  };
}
