#!/usr/bin/env node
/**
 * Writes API.md, the API reference jsii-docgen renders from the jsii assembly (lib/packaging/api-docs.ts;
 * builds .jsii first when stale). With --check it writes nothing and exits 1 when API.md is stale
 * (`make package` runs that).
 *
 *   npx ts-node --transpile-only bin/build-api-docs.ts [--check]
 */
import * as fs from 'fs';
import * as path from 'path';
import { API_DOCS_FILE, apiDocsStaleness, renderApiDocs } from '../lib/packaging/api-docs';
import { ROOT } from '../lib/packaging/handler-bundles';

const rendered = renderApiDocs();
const stale = apiDocsStaleness(rendered);
if (process.argv.includes('--check')) {
  if (stale !== undefined) {
    process.stderr.write(`${stale}\n`);
    process.exit(1);
  }
  process.stdout.write(`up to date: ${path.relative(ROOT, API_DOCS_FILE)}\n`);
} else {
  if (stale !== undefined) fs.writeFileSync(API_DOCS_FILE, rendered);
  process.stdout.write(`${stale === undefined ? 'up to date:' : 'wrote'} ${path.relative(ROOT, API_DOCS_FILE)}\n`);
}
