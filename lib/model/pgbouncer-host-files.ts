/**
 * The PgBouncer engine's host software, as files of the kit (host/): the bootstrap (bootstrap.sh), the AWS calls
 * and packages fetcher (apk_aws.py), the host agent (apk_host.py), the systemd units and the refresh script.
 * They are shell, Python and unit files of their own, linted and tested as such (`make lint`: shellcheck,
 * pyflakes); the model reads them as they are and embeds them: the user data carries the bootstrap's files
 * (pgbouncer-bootstrap.ts), the packages object the agent (lib/packaging/pooler-packages.ts).
 *
 * The package ships host/ beside dist/ (package.json `files`): the folder is found by walking up from this
 * module, which sits at lib/model in the kit and at dist/cdk/lib/model in the package.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A file the bootstrap always carries: how the folder is recognised. */
const MARKER = 'bootstrap.sh';

function findHostDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'host');
    if (fs.existsSync(path.join(candidate, MARKER))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`the kit's host/ folder (with ${MARKER}) is not in ${__dirname} or above: the package is incomplete`);
  }
}

let hostDir: string | undefined;

/** The folder of the host software. */
export function hostFilesDir(): string {
  hostDir ??= findHostDir();
  return hostDir;
}

/** A file of the host software, as text. */
export function hostFile(name: string): string {
  return fs.readFileSync(path.join(hostFilesDir(), name), 'utf8');
}
