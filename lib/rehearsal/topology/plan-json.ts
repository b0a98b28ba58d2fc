/**
 * `terraform show -json <planfile>` as the topology reader needs it: the planned resource instances
 * (values known at plan, and which are known only after apply), the configuration each was written
 * with (expressions, references, depends_on), the root variables, and Terraform's address syntax.
 */
import { TopologyInputError } from './errors';

/** An argument's expression in `configuration`: a constant, or the references it reads. */
export interface ConfigExpression {
  readonly constant_value?: unknown;
  readonly references?: ReadonlyArray<string>;
}

export interface ConfigResource {
  readonly address: string;
  readonly mode: string;
  readonly type: string;
  readonly name: string;
  /** Arguments; a nested block is an array of objects of expressions. */
  readonly expressions?: Readonly<Record<string, unknown>>;
  readonly depends_on?: ReadonlyArray<string>;
  readonly for_each_expression?: ConfigExpression;
}

export interface ConfigModule {
  readonly resources?: ReadonlyArray<ConfigResource>;
  readonly module_calls?: Readonly<Record<string, ModuleCall>>;
  readonly outputs?: Readonly<Record<string, { readonly expression?: ConfigExpression }>>;
}

export interface ModuleCall {
  readonly source?: string;
  readonly expressions?: Readonly<Record<string, ConfigExpression>>;
  readonly module?: ConfigModule;
  readonly depends_on?: ReadonlyArray<string>;
}

interface ResourceChange {
  readonly address: string;
  readonly module_address?: string;
  readonly mode: string;
  readonly type: string;
  readonly name: string;
  readonly index?: string | number;
  readonly change: { readonly actions: ReadonlyArray<string>; readonly after: Record<string, unknown> | null; readonly after_unknown?: Record<string, unknown> };
}

interface StateModule {
  readonly address?: string;
  readonly resources?: ReadonlyArray<{ readonly address: string; readonly mode: string; readonly type: string; readonly name: string; readonly index?: string | number; readonly values?: Record<string, unknown> }>;
  readonly child_modules?: ReadonlyArray<StateModule>;
}

export interface PlanJson {
  readonly format_version?: string;
  readonly terraform_version?: string;
  readonly errored?: boolean;
  readonly variables?: Readonly<Record<string, { readonly value?: unknown }>>;
  readonly resource_changes?: ReadonlyArray<ResourceChange>;
  readonly prior_state?: { readonly values?: { readonly root_module?: StateModule } };
  /** The root module's outputs as planned: `after` holds what is known at plan, `after_unknown` marks the rest. */
  readonly output_changes?: Readonly<Record<string, { readonly after?: unknown; readonly after_unknown?: unknown }>>;
  readonly values?: unknown;
  readonly configuration?: {
    readonly provider_config?: Readonly<Record<string, { readonly name?: string; readonly module_address?: string; readonly expressions?: Readonly<Record<string, ConfigExpression>> }>>;
    readonly root_module?: ConfigModule;
  };
}

/** One step of a Terraform traversal: an attribute or module/resource name, or an index key. */
export type TraversalStep = { readonly name: string } | { readonly key: string | number };

/** Parses `module.a["k"].aws_vpc.this["data"].id` into its steps (quoted keys may hold dots). */
export function parseTraversal(text: string): TraversalStep[] {
  const steps: TraversalStep[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '.') {
      i++;
    } else if (c === '[') {
      let j = i + 1;
      if (text[j] === '"') {
        j++;
        while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
        steps.push({ key: JSON.parse(text.slice(i + 1, j + 1)) as string });
        j++;
      } else {
        while (j < text.length && text[j] !== ']') j++;
        const raw = text.slice(i + 1, j);
        steps.push({ key: /^\d+$/.test(raw) ? Number(raw) : raw });
      }
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && text[j] !== '.' && text[j] !== '[') j++;
      steps.push({ name: text.slice(i, j) });
      i = j;
    }
  }
  return steps;
}

/** The module names of a module address, instance keys dropped: `module.a["x"].module.b` -> [a, b]. */
export function modulePathOf(moduleAddress: string | undefined): string[] {
  const steps = parseTraversal(moduleAddress ?? '');
  const path: string[] = [];
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if ('name' in step && step.name === 'module' && steps[i + 1] && 'name' in steps[i + 1]!) path.push((steps[++i] as { name: string }).name);
  }
  return path;
}

/** `module.a.module.b.` for [a, b]: the prefix of absolute configuration addresses. */
export function modulePrefix(path: ReadonlyArray<string>): string {
  return path.map((m) => `module.${m}.`).join('');
}

/** A planned resource instance. */
export interface PlanResource {
  readonly address: string;
  /** Module names from the root, instance keys dropped. */
  readonly modulePath: ReadonlyArray<string>;
  readonly mode: string;
  readonly type: string;
  readonly name: string;
  readonly index?: string | number;
  /** Values known at plan (null where unknown). */
  readonly values: Readonly<Record<string, unknown>>;
  /** Which values are known only after apply (after_unknown). */
  readonly unknown: Readonly<Record<string, unknown>>;
  readonly config?: ConfigResource;
}

const PLAN_FIX = 'pass `terraform show -json <planfile>` output: terraform plan -out=plan.tfplan && terraform show -json plan.tfplan > plan.json';

export class PlanIndex {
  public readonly resources: ReadonlyArray<PlanResource>;

  constructor(
    public readonly plan: PlanJson,
    /** The file it came from, for messages. */
    public readonly file: string,
  ) {
    if (plan === null || typeof plan !== 'object' || Array.isArray(plan)) throw new TopologyInputError(file, 'not a JSON object', PLAN_FIX);
    if (plan.resource_changes === undefined && plan.values !== undefined) throw new TopologyInputError(file, 'state JSON, not plan JSON (it has values but no resource_changes)', PLAN_FIX);
    if (!Array.isArray(plan.resource_changes)) throw new TopologyInputError(file, 'no resource_changes', PLAN_FIX);
    if (plan.errored === true) throw new TopologyInputError(file, 'a plan that errored', 'fix the errors `terraform plan` reports, then plan again');
    if (plan.configuration?.root_module === undefined) throw new TopologyInputError(file, 'no configuration.root_module', `${PLAN_FIX} (the configuration resolves references unknown at plan)`);
    const planned = plan.resource_changes
      .filter((r) => r.change.after !== null && !(r.change.actions.length === 1 && r.change.actions[0] === 'delete'))
      .map((r) => this.entry(r.address, r.module_address, r.mode, r.type, r.name, r.index, r.change.after ?? {}, r.change.after_unknown ?? {}));
    // Data sources read during plan appear in prior_state only.
    const seen = new Set(planned.map((r) => r.address));
    const fromState: PlanResource[] = [];
    const walk = (m: StateModule | undefined): void => {
      for (const r of m?.resources ?? []) {
        if (!seen.has(r.address)) fromState.push(this.entry(r.address, m?.address, r.mode, r.type, r.name, r.index, r.values ?? {}, {}));
      }
      for (const child of m?.child_modules ?? []) walk(child);
    };
    walk(plan.prior_state?.values?.root_module);
    this.resources = [...planned, ...fromState];
  }

  private entry(address: string, moduleAddress: string | undefined, mode: string, type: string, name: string, index: string | number | undefined, values: Record<string, unknown>, unknown: Record<string, unknown>): PlanResource {
    const modulePath = modulePathOf(moduleAddress);
    const local = `${mode === 'data' ? 'data.' : ''}${type}.${name}`;
    const config = this.configModule(modulePath)?.resources?.find((c) => c.address === local);
    return { address, modulePath, mode, type, name, ...(index !== undefined ? { index } : {}), values, unknown, ...(config ? { config } : {}) };
  }

  public configModule(path: ReadonlyArray<string>): ConfigModule | undefined {
    let m: ConfigModule | undefined = this.plan.configuration?.root_module;
    for (const name of path) m = m?.module_calls?.[name]?.module;
    return m;
  }

  public moduleCall(path: ReadonlyArray<string>): ModuleCall | undefined {
    if (path.length === 0) return undefined;
    return this.configModule(path.slice(0, -1))?.module_calls?.[path[path.length - 1]!];
  }

  public managed(type: string): PlanResource[] {
    return this.resources.filter((r) => r.mode === 'managed' && r.type === type);
  }

  /** The root module's value of a variable (`-var`, tfvars or default). */
  public rootVariable(name: string): { value: unknown } | undefined {
    const v = this.plan.variables?.[name];
    return v === undefined ? undefined : { value: v.value };
  }
}

/** The value at a path of attribute names and list indexes; undefined when absent or unknown (null). */
export function valueAt(values: unknown, path: ReadonlyArray<string | number>): unknown {
  let v: unknown = values;
  for (const step of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[step];
  }
  return v === null ? undefined : v;
}
