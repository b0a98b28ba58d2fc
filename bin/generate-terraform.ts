#!/usr/bin/env node
/**
 * Renders what the Terraform modules restate from lib/model (lib/terraform does the work).
 *
 *   npx ts-node --transpile-only bin/generate-terraform.ts          # write
 *   npx ts-node --transpile-only bin/generate-terraform.ts --check  # fail when a committed file differs
 */
import { staleFiles, writeGenerated } from '../lib/terraform';

if (process.argv.includes('--check')) {
  const stale = staleFiles();
  if (stale.length > 0) {
    process.stderr.write(`generated Terraform files are out of date (run make terraform-generate):\n  ${stale.join('\n  ')}\n`);
    process.exit(1);
  }
  process.stdout.write('generated Terraform files are up to date\n');
} else {
  const written = writeGenerated();
  for (const rel of written) process.stdout.write(`wrote ${rel}\n`);
  if (written.length === 0) process.stdout.write('generated Terraform files are up to date\n');
}
