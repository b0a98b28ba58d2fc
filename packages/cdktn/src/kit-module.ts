import { type IResolvable, TerraformHclModule, type TerraformModuleUserConfig, Token } from 'cdktn';
import type { Construct } from 'constructs';
import { type RuleReads, kitViolations } from './kit-rules';
import { KitValidationError } from './validation-error';

/** What every construct of the package takes besides the module's variables. */
export interface KitModuleOptions extends TerraformModuleUserConfig {
  /**
   * Where Terraform gets the module: a git URL, a registry address, or a local path (with
   * `skipAssetCreationFromLocalModules: true` Terraform reads it in place, relative to the stack's
   * output directory, so the module's own `../internal/...` calls resolve).
   * @default the class's DEFAULT_SOURCE: this repository at the kit's release tag
   */
  readonly source?: string;
  /** Version constraint, for a registry source. */
  readonly version?: string;
}

/** What a generated class tells its base: the module, its default source, its variables and rule inputs. */
export interface ModuleSpec {
  readonly module: string;
  readonly defaultSource: string;
  /** Prop -> the module's variable. */
  readonly variables: Readonly<Record<string, string>>;
  /** Model property -> how it is read from the variables. */
  readonly ruleReads: RuleReads;
}

const OPTION_KEYS = new Set(['source', 'version', 'providers', 'dependsOn', 'forEach', 'skipAssetCreationFromLocalModules']);

/** The module's variables from the props: each prop under its variable's name, unset props left out. */
function moduleVariables(spec: ModuleSpec, props: object): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const [prop, value] of Object.entries(props)) {
    if (OPTION_KEYS.has(prop) || value === undefined) continue;
    const variable = spec.variables[prop];
    if (variable === undefined) {
      throw new Error(`${prop} is not an input of modules/${spec.module}: use one of ${Object.keys(spec.variables).join(', ')}`);
    }
    variables[variable] = value;
  }
  return variables;
}

/**
 * A Terraform module of the kit as a construct (cdktn's TerraformHclModule): the typed props become the
 * module's variables, and the kit's rules (lib/model) run on them when it is constructed, so bad input
 * fails at synth with the message the CDK constructs give, naming the prop.
 */
export abstract class KitModule extends TerraformHclModule {
  protected constructor(scope: Construct, id: string, props: KitModuleOptions, spec: ModuleSpec) {
    const variables = moduleVariables(spec, props);
    super(scope, id, {
      source: props.source ?? spec.defaultSource,
      version: props.version,
      providers: props.providers,
      dependsOn: props.dependsOn,
      forEach: props.forEach,
      skipAssetCreationFromLocalModules: props.skipAssetCreationFromLocalModules,
      variables,
    });
    const violations = kitViolations(spec.module, variables, spec.ruleReads);
    if (violations.length > 0) throw new KitValidationError(this, violations);
  }

  /** An output that is a map of strings. */
  protected getStringMap(output: string): { [key: string]: string } {
    return Token.asStringMap(this.interpolationForOutput(output));
  }

  /** An output that is a map of numbers. */
  protected getNumberMap(output: string): { [key: string]: number } {
    return Token.asNumberMap(this.interpolationForOutput(output));
  }

  /** An output of any other type (an object, a map of objects), to pass on or index with Fn.lookup. */
  protected getAny(output: string): IResolvable {
    return this.interpolationForOutput(output);
  }
}
