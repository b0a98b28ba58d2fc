import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ROOT } from './handler-bundles';
import { buildPackage } from './npm-package';

/**
 * The API reference: API.md, rendered by jsii-docgen (the version package.json pins) from the jsii
 * assembly (.jsii) the npm package's build makes, so it documents exactly what the package exports, with
 * each construct's, prop's and method's doc comment. Committed, so a reader on GitHub has it without a
 * build; `make api-docs` writes it and `make package` refuses a stale one.
 */
export const API_DOCS_FILE = path.join(ROOT, 'API.md');
export const API_DOCS_REGENERATE = 'make api-docs';

/** What jsii-docgen renders from the current sources (builds .jsii first when stale). */
export function renderApiDocs(): string {
  buildPackage();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-docs-'));
  try {
    // The CLI appends the format's extension to --output.
    execFileSync(process.execPath, [require.resolve('jsii-docgen/bin/jsii-docgen'), '--output', path.join(dir, 'API')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    return fs.readFileSync(path.join(dir, 'API.md'), 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Why the committed API.md is not what the sources render, or undefined when it is. */
export function apiDocsStaleness(rendered: string, file = API_DOCS_FILE): string | undefined {
  if (!fs.existsSync(file)) return `${path.relative(ROOT, file)} is missing: run ${API_DOCS_REGENERATE} and commit it`;
  const committed = fs.readFileSync(file, 'utf8');
  if (committed === rendered) return undefined;
  const a = committed.split('\n');
  const b = rendered.split('\n');
  let line = 0;
  while (line < a.length && line < b.length && a[line] === b[line]) line++;
  return `${path.relative(ROOT, file)} is stale against the library's jsii assembly (first difference at line ${line + 1}: ` +
    `${JSON.stringify(a[line] ?? '<end of file>')} should be ${JSON.stringify(b[line] ?? '<end of file>')}): run ${API_DOCS_REGENERATE} and commit it`;
}
