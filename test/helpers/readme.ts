import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');

/** The README's usage example: the first ```ts block under "## Usage", as a user copies it. */
export function readmeUsageExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const usage = readme.slice(readme.indexOf('## Usage'));
  const match = /```ts\n([\s\S]*?)```/.exec(usage);
  if (!match) throw new Error('README.md has no ```ts block under "## Usage"');
  return match[1];
}
