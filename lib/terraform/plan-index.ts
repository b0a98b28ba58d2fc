/**
 * A Terraform plan as its readers walk it: its planned resource instances (values known at plan, and which are
 * known only after apply; data sources plan read among them), each with the configuration it was written with,
 * the module calls, the root variables and outputs. The plan's JSON is typed in plan-json.ts.
 */
import { modulePathOf, type ConfigModule, type ConfigResource, type ModuleCall, type PlanJson, type StateModule } from './plan-json';

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

export class PlanIndex {
  public readonly resources: ReadonlyArray<PlanResource>;

  constructor(
    public readonly plan: PlanJson,
    /** The file it came from, for messages. */
    public readonly file = 'plan.json',
  ) {
    const planned = (plan.resource_changes ?? [])
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

  /** The root output whose expression reads `module.<name>.<output>` of a module the root calls, and its planned change. */
  public moduleOutput(modulePath: ReadonlyArray<string>, output: string): { name: string; after: unknown; afterUnknown: unknown } | undefined {
    if (modulePath.length !== 1) return undefined;
    const reference = `module.${modulePath[0]}.${output}`;
    const outputs = this.configModule([])?.outputs ?? {};
    const name = Object.keys(outputs).find((o) => (outputs[o]?.expression?.references ?? []).includes(reference));
    const change = name === undefined ? undefined : this.plan.output_changes?.[name];
    return name === undefined || change === undefined ? undefined : { name, after: change.after, afterUnknown: change.after_unknown };
  }

  /** The root module's value of a variable (`-var`, tfvars or default). */
  public rootVariable(name: string): { value: unknown } | undefined {
    const v = this.plan.variables?.[name];
    return v === undefined ? undefined : { value: v.value };
  }
}
