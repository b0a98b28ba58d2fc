/** Checks that run before anything starts: free addresses, a usable work directory. */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { AddressInUseError, RehearsalConfigError } from './errors';
import type { OsUser } from './os-user';

export interface Listener {
  readonly role: string;
  readonly address: string;
  readonly port: number;
}

/** Binds and releases each address:port; the first one taken raises AddressInUseError. */
export async function assertAddressesFree(listeners: ReadonlyArray<Listener>): Promise<void> {
  for (const l of listeners) {
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', (err: NodeJS.ErrnoException) => reject(new AddressInUseError(l.role, l.address, l.port, err.code ?? err.message)));
      server.listen({ host: l.address, port: l.port, exclusive: true }, () => server.close(() => resolve()));
    });
  }
}

/** The server user must be able to reach its directories inside the work dir. */
export function assertWorkDirUsable(workDir: string, user: OsUser | undefined): void {
  let dir = existsSync(workDir) ? workDir : dirname(workDir);
  while (!existsSync(dir)) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new RehearsalConfigError([`workDir ${workDir} is not writable (${dir}): choose a directory you can write, e.g. --work-dir /tmp/rehearsal`]);
  }
  if (user === undefined) return;
  // Every ancestor must be traversable by "others", since the servers run as postgres.
  for (let d = dir; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) {
      throw new RehearsalConfigError([`workDir ${workDir} is inside ${d}, which the postgres user cannot traverse: choose another directory (e.g. --work-dir /tmp/rehearsal) or chmod o+x ${d}`]);
    }
    if (d === dirname(d)) break;
  }
}
