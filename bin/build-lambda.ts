#!/usr/bin/env node
/**
 * Builds the Lambda zips the Terraform modules deploy, and the release's checksums of them
 * (lib/packaging/handler-bundles.ts does the work): dist/lambda/{read-handler,write-handler,role-bootstrap,pooler-certificate}.zip,
 * SHA256SUMS and lambda-artifacts.json.
 *
 *   npx ts-node --transpile-only bin/build-lambda.ts [outDir]
 */
import * as fs from 'fs';
import * as path from 'path';
import { buildLambdaZips, LAMBDA_ZIP_DIR, ROOT } from '../lib/packaging/handler-bundles';

for (const zip of buildLambdaZips(path.resolve(process.argv[2] ?? LAMBDA_ZIP_DIR))) {
  process.stdout.write(`${path.relative(ROOT, zip)} ${fs.statSync(zip).size} bytes\n`);
}
