import { CfnResource } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/** A checkov check the design accepts on one resource, and why. */
export interface CheckovSkip {
  readonly id: string;
  readonly comment: string;
}

/**
 * Records checkov skips on a resource's template Metadata (`checkov: skip:`), which checkov reads, so
 * the reason travels with the resource instead of sitting in a global ignore list.
 */
export function skipCheckov(construct: IConstruct, skips: ReadonlyArray<CheckovSkip>): void {
  const resource = construct instanceof CfnResource ? construct : (construct.node.defaultChild as CfnResource | undefined);
  if (!resource) throw new Error(`skipCheckov: ${construct.node.path} has no CloudFormation resource`);
  const existing = (resource.getMetadata('checkov') as { skip?: CheckovSkip[] } | undefined)?.skip ?? [];
  resource.addMetadata('checkov', { skip: [...existing, ...skips] });
}
