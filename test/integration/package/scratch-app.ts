import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';

/**
 * A CDK app of a kit user, in a temporary directory outside the repository: the packed tarball and
 * its peers installed with plain `npm install`, code compiled and run with node, nothing of the
 * repository on its module path.
 */
export const ROOT = path.join(__dirname, '..', '..', '..');

/** The repository's cdk.json context, which a scratch app runs with as the CDK CLI would. */
export const CDK_CONTEXT = (JSON.parse(fs.readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

/** The version package-lock.json pins for a package, so the scratch app runs what the repository tests. */
export function lockedVersion(name: string): string {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`package-lock.json pins no ${name}`);
  return version;
}

/** The environment without npm's own variables (a parent `npm test` would point them at the repository). */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))), ...extra };
}

/** `npm pack` of the repository (its prepack script builds dist/cdk) into `destDir`; the tarball's path. */
export function packTarball(destDir: string): { tarball: string; files: string[] } {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', destDir, '--loglevel=error'], {
    cwd: ROOT,
    env: cleanEnv(),
    encoding: 'utf8',
    timeout: 180_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  // The prepack build's own output (jsii's warnings, e.g. `[language-csharp] ...`) comes first: the report is the
  // JSON array that starts a line of its own.
  const start = out.search(/^\[\s*\{/m);
  if (start < 0) throw new Error(`npm pack --json printed no report:\n${out.slice(-2000)}`);
  const [packed] = JSON.parse(out.slice(start)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: path.join(destDir, packed.filename), files: packed.files.map((f) => f.path) };
}

export class ScratchApp {
  public readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aurora-proxy-kit-user-'));

  constructor() {
    if (!path.relative(ROOT, this.dir).startsWith('..')) throw new Error(`${this.dir} is inside the repository`);
    fs.writeFileSync(path.join(this.dir, 'package.json'), `${JSON.stringify({ name: 'kit-user-app', private: true, version: '1.0.0' }, null, 2)}\n`);
  }

  /** Plain `npm install`, from npm's cache where it has the packages. */
  public install(specs: ReadonlyArray<string>): void {
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], {
      cwd: this.dir,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
  }

  /** The packed kit beside `peers` at the versions package-lock.json pins, so the app runs what the repository tests. */
  public installKit(tarball: string, peers: ReadonlyArray<string>): void {
    this.install([tarball, ...peers.map((name) => `${name}@${lockedVersion(name)}`)]);
  }

  /** `<name>.js` from TypeScript, without a type check. */
  public transpile(name: string, source: string): void {
    fs.writeFileSync(path.join(this.dir, `${name}.js`), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText);
  }

  /** Type-checks `<name>.ts` with the repository's TypeScript against what is installed here, and emits `<name>.js`; the errors. */
  public compile(name: string, source: string): string[] {
    const file = path.join(this.dir, `${name}.ts`);
    fs.writeFileSync(file, source);
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2022,
      // Node's own resolution, package.json `exports` included, as a current CDK app's tsconfig has it.
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      types: ['node'],
      typeRoots: [path.join(this.dir, 'node_modules', '@types')],
      outDir: this.dir,
      rootDir: this.dir,
    });
    const emitted = program.emit();
    return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => {
      const where = d.file && d.start !== undefined ? `${path.relative(this.dir, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} ` : '';
      return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  }

  /** `node <name>.js` here, as the CDK CLI runs an app: CDK_OUTDIR (`output` under the app) and the context in the environment. */
  public run(name: string, context: Record<string, unknown>, output = `cdk.out.${name}`): { status: number; stdout: string; stderr: string; outdir: string } {
    const outdir = path.join(this.dir, output);
    const r = spawnSync(process.execPath, [`${name}.js`], {
      cwd: this.dir,
      env: cleanEnv({ CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(context), NODE_PATH: '' }),
      encoding: 'utf8',
      timeout: 180_000,
    });
    return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '', outdir };
  }

  /** `npx <command> ...` here, as the user types it (npm runs the installed package's bin). */
  public npx(command: string, args: ReadonlyArray<string>): { status: number; stdout: string; stderr: string } {
    const r = spawnSync('npx', ['--no-install', command, ...args], { cwd: this.dir, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** Whether a module resolves from this app, as its code would require it. */
  public resolves(moduleName: string): boolean {
    try {
      require.resolve(moduleName, { paths: [this.dir] });
      return true;
    } catch {
      return false;
    }
  }

  public dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
