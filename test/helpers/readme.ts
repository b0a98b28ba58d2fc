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

/** The README's Python example: the ```python block under "### Python", as a user copies it. */
export function readmePythonExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Python'));
  const match = /```python\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README.md has no ```python block under "### Python"');
  return match[1];
}
