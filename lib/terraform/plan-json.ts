/**
 * `terraform show -json <planfile>`, typed once for every reader of the kit: `plan summary` (lib/cli), the
 * rehearsal's topology (lib/rehearsal/topology) and the Terraform tests. The fields are those of Terraform's
 * "JSON Output Format" (format_version 1.x) that the readers use; a field Terraform leaves out when it is empty
 * (no changes, no resources, an argument-less resource) is optional, so each reader says what absence means.
 * Also Terraform's address syntax (`module.a["k"].aws_vpc.this`), which the plan's addresses and references use.
 */

/** An argument's expression in `configuration`: a constant, or the references it reads. */
export interface ConfigExpression {
  readonly constant_value?: unknown;
  readonly references?: ReadonlyArray<string>;
}

/** A resource block of a module's configuration. */
export interface ConfigResource {
  /** Its address within its module: `aws_vpc.this`, `data.aws_region.current`. */
  readonly address: string;
  readonly mode: string;
  readonly type: string;
  readonly name: string;
  /** Arguments; a nested block is an array of objects of expressions. */
  readonly expressions?: Readonly<Record<string, unknown>>;
  readonly depends_on?: ReadonlyArray<string>;
  readonly for_each_expression?: ConfigExpression;
}

/** A module's configuration: its resources, the modules it calls and its outputs. */
export interface ConfigModule {
  readonly resources?: ReadonlyArray<ConfigResource>;
  readonly module_calls?: Readonly<Record<string, ModuleCall>>;
  readonly outputs?: Readonly<Record<string, { readonly expression?: ConfigExpression }>>;
}

/** A `module` block: the source as written, its inputs' expressions, the called module's configuration, its depends_on. */
export interface ModuleCall {
  readonly source: string;
  readonly expressions?: Readonly<Record<string, ConfigExpression>>;
  readonly module?: ConfigModule;
  readonly depends_on?: ReadonlyArray<string>;
}

/** A provider block, by its configuration key (`aws`, `aws.west`, `<module>:aws`). */
export interface ProviderConfig {
  readonly name?: string;
  readonly module_address?: string;
  readonly expressions?: Readonly<Record<string, ConfigExpression>>;
}

/** A planned change of one resource instance. */
export interface ResourceChange {
  readonly address: string;
  /** The address it had in the prior state, when a `moved` block or a refactoring moved it. */
  readonly previous_address?: string;
  readonly module_address?: string;
  readonly mode: string;
  readonly type: string;
  readonly name: string;
  /** Its count index or for_each key. */
  readonly index?: string | number;
  readonly change: {
    readonly actions: ReadonlyArray<string>;
    /** The planned values, known at plan (unknown ones are absent or null); null when the instance is deleted. */
    readonly after: Readonly<Record<string, unknown>> | null;
    /** Which values are known only after apply: `true` at their place. */
    readonly after_unknown?: Readonly<Record<string, unknown>>;
  };
}

/** A module of a state (the plan's `prior_state`: what plan read, data sources among it). */
export interface StateModule {
  readonly address?: string;
  readonly resources?: ReadonlyArray<{
    readonly address: string;
    readonly mode: string;
    readonly type: string;
    readonly name: string;
    readonly index?: string | number;
    readonly values?: Readonly<Record<string, unknown>>;
  }>;
  readonly child_modules?: ReadonlyArray<StateModule>;
}

/** The plan's configuration: the provider blocks and the root module. */
export interface PlanConfiguration {
  readonly provider_config?: Readonly<Record<string, ProviderConfig>>;
  readonly root_module?: ConfigModule;
}

export interface PlanJson {
  readonly format_version?: string;
  readonly terraform_version?: string;
  /** The plan stopped at an error. */
  readonly errored?: boolean;
  /** The root module's variables as planned with (`-var`, tfvars or default). */
  readonly variables?: Readonly<Record<string, { readonly value?: unknown }>>;
  readonly resource_changes?: ReadonlyArray<ResourceChange>;
  /** The root module's outputs as planned: `after` holds what is known at plan, `after_unknown` marks the rest. */
  readonly output_changes?: Readonly<Record<string, { readonly after?: unknown; readonly after_unknown?: unknown }>>;
  /** The planned values; only `outputs` (the root module's, with their known values) is typed. */
  readonly planned_values?: { readonly outputs?: Readonly<Record<string, { readonly value?: unknown }>> };
  /** What plan read: the data sources whose arguments were known then (the others are reads in resource_changes). */
  readonly prior_state?: { readonly values?: { readonly root_module?: StateModule } };
  /** Present in state JSON, not in plan JSON: how a reader tells a state given in place of a plan. */
  readonly values?: unknown;
  readonly configuration?: PlanConfiguration;
}

/**
 * A plan of a configuration that has resources, as the kit's own configurations give: the resource changes and
 * the root module's resources are there (PlanJson leaves them optional, as Terraform omits them when empty).
 */
export interface PlanOfResources extends PlanJson {
  readonly resource_changes: ReadonlyArray<ResourceChange>;
  readonly configuration: PlanConfiguration & { readonly root_module: ConfigModule & { readonly resources: ReadonlyArray<ConfigResource> } };
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

/** The value at a path of attribute names and list indexes; undefined when absent or unknown (null). */
export function valueAt(values: unknown, path: ReadonlyArray<string | number>): unknown {
  let v: unknown = values;
  for (const step of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[step];
  }
  return v === null ? undefined : v;
}
