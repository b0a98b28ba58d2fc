import * as fs from 'fs';
import * as path from 'path';
import { NodeRelease } from '@jsii/check-node';

/**
 * The Node.js the kit asks for (package.json `engines`, and the README wherever it names a minimum) is a
 * release jsii supports: jsii builds the package and its runtime runs the Python package's constructs, and
 * it prints an end-of-life banner on any other.
 */
const ROOT = path.join(__dirname, '..', '..');

function enginesMinimum(): number {
  const engines = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  const match = /^>=\s*(\d+)$/.exec(engines);
  if (!match) throw new Error(`package.json engines.node ${engines} is not >=<major>`);
  return Number(match[1]);
}

describe('Node.js version', () => {
  test('GIVEN jsii\'s Node.js releases WHEN package.json names its minimum THEN jsii supports it and it is not past its end of life', () => {
    const minimum = enginesMinimum();
    const release = NodeRelease.ALL_RELEASES.find((r) => r.majorVersion === minimum);
    expect([minimum, release?.supported, release?.endOfLife]).toEqual([minimum, true, false]);
  });

  test('GIVEN the README WHEN it names a minimum Node.js THEN it is package.json\'s', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const named = [...readme.matchAll(/Node\.js (\d+)\+|Node\.js >= ?(\d+)/g)].map((m) => Number(m[1] ?? m[2]));
    expect(named.length).toBeGreaterThan(0);
    expect(named).toEqual(named.map(() => enginesMinimum()));
  });
});
