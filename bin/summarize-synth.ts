#!/usr/bin/env node
/**
 * Prints a readable summary of a synthesized cloud assembly: stacks, resources per type, instance
 * classes, the computed Optimized Reads sizes, and each proxy endpoint with its role and VPC.
 *
 *   npx ts-node bin/summarize-synth.ts [cdk.out]
 */
import { summarizeAssembly, formatSummary } from '../lib/reference-app/synth-summary';

const dir = process.argv[2] ?? 'cdk.out';
try {
  process.stdout.write(formatSummary(summarizeAssembly(dir)));
} catch (err) {
  process.stderr.write(`summarize-synth: ${(err as Error).message}\n`);
  process.exit(1);
}
