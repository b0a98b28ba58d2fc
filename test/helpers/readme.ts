import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');

/** The first ```<language> block under README.md's `heading`, as a user copies it. */
function readmeBlock(heading: string, language: string): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const match = new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``).exec(readme.slice(start));
  if (!match) throw new Error(`README.md has no \`\`\`${language} block under "${heading}"`);
  return match[1]!;
}

/** The README's usage example: the first ```ts block under "## Usage". */
export const readmeUsageExample = (): string => readmeBlock('## Usage', 'ts');

/** The README's Python example: the ```python block under "### Python". */
export const readmePythonExample = (): string => readmeBlock('### Python', 'python');

/** The README's PgBouncer engine example: the first ```ts block under "### A PgBouncerProxy app". */
export const readmePgBouncerExample = (): string => readmeBlock('### A PgBouncerProxy app', 'ts');

/** The README's app of three stacks: the first ```ts block under "### Stacks and apps". */
export const readmeStacksExample = (): string => readmeBlock('### Stacks and apps', 'ts');
