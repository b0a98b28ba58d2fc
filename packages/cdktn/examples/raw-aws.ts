import { TerraformDataSource, type TerraformMetaArguments, TerraformProvider, TerraformResource } from 'cdktn';
import type { Construct } from 'constructs';

/**
 * hashicorp/aws without @cdktn/provider-aws: the example's VPCs, keys and policies as raw resources
 * (Terraform type and attributes, in Terraform's names). @cdktn/provider-aws gives typed classes for
 * them instead; it is ~480 MB and needs Node >= 22, so the kit's example does without.
 */
type Attributes = Record<string, unknown>;

export class AwsProvider extends TerraformProvider {
  constructor(scope: Construct, id: string, private readonly settings: { readonly region: string }) {
    super(scope, id, {
      terraformResourceType: 'aws',
      terraformGeneratorMetadata: { providerName: 'aws', providerVersionConstraint: '>= 6.0' },
      terraformProviderSource: 'hashicorp/aws',
    });
  }

  protected synthesizeAttributes(): Attributes {
    return { region: this.settings.region };
  }
}

export class AwsResource extends TerraformResource {
  constructor(scope: Construct, id: string, type: string, private readonly attributes: Attributes, meta: TerraformMetaArguments = {}) {
    super(scope, id, { terraformResourceType: type, ...meta });
  }

  protected synthesizeAttributes(): Attributes {
    return this.attributes;
  }
}

export class AwsData extends TerraformDataSource {
  constructor(scope: Construct, id: string, type: string, private readonly attributes: Attributes = {}) {
    super(scope, id, { terraformResourceType: type });
  }

  protected synthesizeAttributes(): Attributes {
    return this.attributes;
  }
}
