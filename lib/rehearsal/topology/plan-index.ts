/**
 * A Terraform plan as the topology reader walks it: its planned resource instances (values known at plan, and
 * which are known only after apply), each with the configuration it was written with, the module calls and the
 * root variables. The plan's JSON is typed in lib/terraform/plan-json.ts.
 */
import { modulePathOf, type ConfigModule, type ConfigResource, type ModuleCall, type PlanJson, type StateModule } from '../../terraform/plan-json';
import { TopologyInputError } from './errors';

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
