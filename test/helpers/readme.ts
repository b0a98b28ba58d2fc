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

/** The README's PgBouncer engine example: the first ```ts block under "### A PgBouncerProxy app", as a user copies it. */
export function readmePgBouncerExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('### A PgBouncerProxy app');
  if (start < 0) throw new Error('README.md has no "### A PgBouncerProxy app" section');
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!match) throw new Error('README.md has no ```ts block under "### A PgBouncerProxy app"');
  return match[1];
}

/** The README's app of three stacks: the first ```ts block under "### Stacks and apps", as a user copies it. */
export function readmeStacksExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('### Stacks and apps');
  if (start < 0) throw new Error('README.md has no "### Stacks and apps" section');
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!match) throw new Error('README.md has no ```ts block under "### Stacks and apps"');
  return match[1];
}
