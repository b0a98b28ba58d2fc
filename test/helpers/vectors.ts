import * as fs from 'fs';
import * as path from 'path';

/**
 * The shared validation vectors (test/vectors/validation-vectors.json). The CDK tests run them against
 * the model's rule tables and the constructs; the Terraform modules run the same file against their
 * `validation` blocks, so the input keys are the model's property names and the messages are exact.
 */
export interface ValidationVector {
  readonly rule: string;
  readonly input: Record<string, unknown>;
  readonly accepted: boolean;
  readonly message: string | null;
}

export const VECTORS_FILE = path.join(__dirname, '..', 'vectors', 'validation-vectors.json');

export function loadVectors(): ValidationVector[] {
  return JSON.parse(fs.readFileSync(VECTORS_FILE, 'utf8')) as ValidationVector[];
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The message of the one rejected vector of `rule` whose input equals `input`. Construct tests use it
 * so that a construct is held to exactly the message the Terraform modules are held to.
 */
export function rejectionMessage(rule: string, input: Record<string, unknown>): string {
  const matches = loadVectors().filter(
    (v) =>
      v.rule === rule &&
      !v.accepted &&
      Object.keys(v.input).length === Object.keys(input).length &&
      Object.entries(input).every(([k, value]) => sameValue(v.input[k], value)),
  );
  if (matches.length !== 1 || matches[0].message === null) {
    throw new Error(`expected exactly one rejected vector for ${rule} ${JSON.stringify(input)}, found ${matches.length}`);
  }
  return matches[0].message;
}
