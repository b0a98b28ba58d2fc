import * as path from 'path';
import * as ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/** lib/index.ts's exports as the compiler sees them (with the repository's tsconfig), and its type checker. */
export function libIndexExports(): { readonly checker: ts.TypeChecker; readonly exports: ts.Symbol[] } {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const entry = path.join(ROOT, 'lib', 'index.ts');
  const program = ts.createProgram([entry], { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  return { checker, exports: checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!) };
}
