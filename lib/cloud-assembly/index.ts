/**
 * A CDK cloud assembly (the directory `cdk synth` writes), read once for every reader of the kit: `synth
 * summary` (lib/reference-app/synth-summary.ts) and the rehearsal's topology (lib/rehearsal/topology): the stack
 * artifacts its manifest lists, their templates, their environments, and the exports that link them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The directory is not a cloud assembly, or part of it is missing or unreadable. Names the file, the problem
 * and the fix; the readers raise it before anything starts.
 */
export class AssemblyInputError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly fix: string,
    /** How the problem relates to the file, when "<problem> in <file>" does not read right. */
    phrasing: (file: string, problem: string) => string = (f, p) => `${p} in ${f}`,
  ) {
    super(`${phrasing(file, problem)}: ${fix}`);
    this.name = 'AssemblyInputError';
  }
}

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly DependsOn?: string | ReadonlyArray<string>;
  readonly Metadata?: Readonly<Record<string, unknown>>;
}

export interface StackTemplate {
  /** The artifact id (what ids are prefixed with). */
  readonly name: string;
  /** The CloudFormation stack name (the artifact's stackName, else its id). */
  readonly stackName: string;
  /** The template's path as the caller gave the assembly directory (for messages). */
  readonly file: string;
  /** aws://account/region of the artifact; account and region are `unknown-*` for an environment-agnostic stack. */
  readonly environment?: string;
  /** The stack artifacts it depends on (by id; the assets' manifests left out). */
  readonly dependencies: ReadonlyArray<string>;
  readonly resources: Readonly<Record<string, CfnResource>>;
  readonly outputs: Readonly<Record<string, { readonly Value: unknown; readonly Export?: { readonly Name?: unknown } }>>;
}

/** A resource with its stack, and its topology id `<stack>/<logical id>`. */
export interface LocatedResource {
  readonly stack: StackTemplate;
  readonly logicalId: string;
  readonly resource: CfnResource;
  readonly id: string;
}

interface Manifest {
  readonly artifacts?: Record<string, { readonly type?: string; readonly environment?: string; readonly dependencies?: ReadonlyArray<string>; readonly properties?: { readonly templateFile?: string; readonly stackName?: string } }>;
}

const SYNTH_FIX = 'pass the directory `cdk synth` writes: run `npx cdk synth --quiet --output cdk.out` (or `make synth`) first';

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AssemblyInputError(file, `${what} is not readable JSON (${err instanceof Error ? err.message : String(err)})`, SYNTH_FIX);
  }
}

export class CloudAssemblyIndex {
  /** Reads `<dir>/manifest.json` and every CloudFormation stack artifact's template. */
  public static read(dir: string): CloudAssemblyIndex {
    const manifestFile = join(dir, 'manifest.json');
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new AssemblyInputError(dir, 'is not a directory', SYNTH_FIX, (f, p) => `${f} ${p}`);
    if (!existsSync(manifestFile)) throw new AssemblyInputError(dir, 'no manifest.json', `${SYNTH_FIX}; a cloud assembly holds manifest.json beside the templates`);
    const manifest = readJson(manifestFile, 'the manifest') as Manifest;
    const stacks = Object.entries(manifest.artifacts ?? {})
      .filter(([, a]) => a.type === 'aws:cloudformation:stack' && a.properties?.templateFile !== undefined)
      .map(([name, a]): StackTemplate => {
        const file = join(dir, a.properties!.templateFile!);
        if (!existsSync(file)) throw new AssemblyInputError(file, `the template of stack ${name} is missing`, SYNTH_FIX);
        const template = readJson(file, `the template of stack ${name}`) as { Resources?: StackTemplate['resources']; Outputs?: StackTemplate['outputs'] };
        const dependencies = (a.dependencies ?? []).filter((d) => manifest.artifacts?.[d]?.type === 'aws:cloudformation:stack');
        return { name, stackName: a.properties?.stackName ?? name, file, environment: a.environment, dependencies, resources: template.Resources ?? {}, outputs: template.Outputs ?? {} };
      });
    if (stacks.length === 0) throw new AssemblyInputError(manifestFile, 'no CloudFormation stack artifact', `${SYNTH_FIX}; the app must define at least one stack`);
    return new CloudAssemblyIndex(dir, stacks);
  }

  private constructor(
    public readonly dir: string,
    public readonly stacks: ReadonlyArray<StackTemplate>,
  ) {}

  /** The stack artifact `name`; an AssemblyInputError naming the stacks there are when it is not one. */
  public stack(name: string): StackTemplate {
    const stack = this.stacks.find((s) => s.name === name);
    if (stack === undefined) throw new AssemblyInputError(join(this.dir, 'manifest.json'), `no stack ${name}`, `pass one of ${this.stacks.map((s) => s.name).join(', ')}`);
    return stack;
  }

  /** The template files, for messages about the whole assembly. */
  public get files(): string {
    return this.stacks.map((s) => s.file).join(', ');
  }

  public ofType(type: string): LocatedResource[] {
    return this.stacks.flatMap((stack) =>
      Object.entries(stack.resources)
        .filter(([, r]) => r.Type === type)
        .map(([logicalId, resource]) => ({ stack, logicalId, resource, id: `${stack.name}/${logicalId}` })),
    );
  }

  public resource(stack: StackTemplate, logicalId: string): LocatedResource | undefined {
    const resource = stack.resources[logicalId];
    return resource === undefined ? undefined : { stack, logicalId, resource, id: `${stack.name}/${logicalId}` };
  }

  /** An output of the stack called `stackName` (what Fn::GetStackOutput reads), with its stack. */
  public stackOutput(stackName: string, outputName: string): { stack: StackTemplate; value: unknown } | undefined {
    const stack = this.stacks.find((s) => s.stackName === stackName);
    const output = stack?.outputs[outputName];
    return stack && output ? { stack, value: output.Value } : undefined;
  }

  /** The output that exports `name` (what Fn::ImportValue reads), with its stack. */
  public exported(name: string): { stack: StackTemplate; value: unknown } | undefined {
    for (const stack of this.stacks) {
      for (const output of Object.values(stack.outputs)) {
        if (output.Export?.Name === name) return { stack, value: output.Value };
      }
    }
    return undefined;
  }
}

/**
 * The asset directory the CDK CLI uploads for a resource's `property` (a function's Code), named by the
 * resource's `aws:asset:path` metadata (relative to the template's directory), else, when asset metadata is off
 * (an app synthesized in-process), by the asset hash in the property's S3Key (`<hash>.zip`, staged as
 * `asset.<hash>`); undefined when it is named by neither, or the staged directory is absent.
 */
export function assetDirectory(r: LocatedResource, property: string): string | undefined {
  const dir = dirname(r.stack.file);
  const asset = r.resource.Metadata?.['aws:asset:path'];
  if (typeof asset === 'string' && r.resource.Metadata?.['aws:asset:property'] === property) return resolve(dir, asset);
  const key = (r.resource.Properties?.[property] as { S3Key?: unknown } | undefined)?.S3Key;
  const hash = typeof key === 'string' ? /^([0-9a-f]{64})\.zip$/.exec(key)?.[1] : undefined;
  const staged = hash === undefined ? undefined : resolve(dir, `asset.${hash}`);
  return staged !== undefined && existsSync(staged) ? staged : undefined;
}

/** The region of an artifact environment `aws://account/region`; undefined when environment-agnostic. */
export function regionOfEnvironment(environment: string | undefined): string | undefined {
  const match = /^aws:\/\/[^/]+\/(.+)$/.exec(environment ?? '');
  return match && match[1] !== 'unknown-region' ? match[1] : undefined;
}
