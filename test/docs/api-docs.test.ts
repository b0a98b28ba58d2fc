import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { libIndexExports } from '../helpers/lib-exports';

/**
 * API.md, without a jsii build: it documents exactly the names lib/index.ts exports, so a construct, prop
 * type or enum added or removed without `make api-docs` fails here. That API.md is byte for byte what
 * jsii-docgen renders now is checked where the jsii build already runs
 * (test/integration/package/api-docs.test.ts, and `make package`).
 */
const ROOT = path.join(__dirname, '..', '..');

/**
 * The names of lib/index.ts's exports that jsii puts in the assembly: classes, interfaces and enums. Type
 * aliases (string unions, aliases of aws-cdk-lib's types) are erased to what they alias, and an `@internal`
 * declaration is left out, as jsii does.
 */
function assemblyTypeNames(): string[] {
  const { checker, exports } = libIndexExports();
  return exports
    .filter((exported) => {
      const declarations = checker.getAliasedSymbol(exported).declarations ?? [];
      return declarations.some((d) => (ts.isClassDeclaration(d) || ts.isInterfaceDeclaration(d) || ts.isEnumDeclaration(d))
        && !ts.getJSDocTags(d).some((tag) => tag.tagName.text === 'internal'));
    })
    .map((s) => s.getName())
    .sort();
}

/** The types API.md documents: jsii-docgen's one `### Name` heading per type of the assembly. */
function documentedNames(markdown: string): string[] {
  return [...markdown.matchAll(/^### (\w+) <a name="\1" id="aurora-proxy-kit\.\1"><\/a>$/gm)].map((m) => m[1]!).sort();
}

describe('API.md', () => {
  const apiMd = fs.readFileSync(path.join(ROOT, 'API.md'), 'utf8');
  // One compile of the library (~25 s on 2 cores) for both tests.
  let exported: string[];
  beforeAll(() => {
    exported = assemblyTypeNames();
  });

  test('GIVEN the committed API.md WHEN its types are listed THEN they are exactly the classes, interfaces and enums lib/index.ts exports (else: make api-docs)', () => {
    expect(documentedNames(apiMd)).toEqual(exported);
  });

  test('GIVEN an API.md missing a type WHEN its types are listed THEN the list differs from the exports', () => {
    // The check can fail: a section taken out is seen.
    const without = apiMd.replace(/^### PgBouncerProxy <a name="PgBouncerProxy" id="aurora-proxy-kit\.PgBouncerProxy"><\/a>$/m, '');
    expect(without).not.toEqual(apiMd);
    expect(documentedNames(without)).not.toEqual(exported);
  });

  test('GIVEN the README WHEN it points to the API reference THEN it links API.md', () => {
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain('](API.md)');
  });
});
