import { CustomResource, Stack, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { skipCheckov, type CheckovSkip } from './checkov';

/** cdk-nag's finding on the AWS-maintained policy every Lambda role of the kit carries. */
export const BASIC_EXECUTION_ACKNOWLEDGEMENT = {
  id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
  reason: 'AWS-maintained policy for writing the function\'s own CloudWatch logs; it grants nothing on data',
};

/** checkov's findings on a function a custom resource provider runs once per deployment. */
export const DEPLOY_TIME_FUNCTION_SKIPS: ReadonlyArray<CheckovSkip> = [
  { id: 'CKV_AWS_116', comment: 'Deploy-time function invoked synchronously by the custom resource provider; no DLQ applies' },
  { id: 'CKV_AWS_115', comment: 'Runs once per deployment; reserving concurrency would only take it from the account' },
];

export interface DeployTimeResourceOptions {
  /** The kit's function that does the work (its own findings are its construct's to acknowledge). */
  readonly onEventHandler: lambda.Function;
  readonly logGroup: logs.ILogGroup;
  readonly resourceType: string;
  readonly properties: Record<string, unknown>;
  /** What the function is, in the framework's acknowledgements: "the bootstrap function". */
  readonly what: string;
}

/**
 * A custom resource run by the kit's own function through aws-cdk-lib's provider framework, whose
 * function (outside any VPC) answers CloudFormation; the framework's cdk-nag and checkov findings are
 * acknowledged here, once for every such resource of the kit.
 */
export function deployTimeResource(scope: Construct, options: DeployTimeResourceOptions): CustomResource {
  const provider = new cr.Provider(scope, 'Provider', { onEventHandler: options.onEventHandler, logGroup: options.logGroup });
  const resource = new CustomResource(scope, 'Resource', {
    serviceToken: provider.serviceToken,
    resourceType: options.resourceType,
    properties: options.properties,
  });
  const framework = provider.node.findChild('framework-onEvent');
  // The framework may invoke the function and its versions (`<arn>:*`).
  const functionLogicalId = Stack.of(scope).getLogicalId(options.onEventHandler.node.defaultChild as lambda.CfnFunction);
  Validations.of(framework).acknowledge(BASIC_EXECUTION_ACKNOWLEDGEMENT, {
    id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`,
    reason: `The provider framework invokes ${options.what} and its versions only`,
  });
  skipCheckov(framework, [
    ...DEPLOY_TIME_FUNCTION_SKIPS,
    { id: 'CKV_AWS_117', comment: 'aws-cdk-lib\'s provider framework answers CloudFormation over the internet; it reaches nothing in a VPC' },
    { id: 'CKV_AWS_173', comment: `aws-cdk-lib's provider framework environment holds only ${options.what}'s name` },
  ]);
  return resource;
}
