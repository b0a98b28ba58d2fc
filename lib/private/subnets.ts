import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { throwIfInvalid } from './validation';

/**
 * The subnets a construct is placed in: `vpcSubnets`, or by default the VPC's isolated subnets (the data
 * path needs no route to the internet). A VPC without isolated subnets fails here, naming the construct
 * and the prop to set, instead of with aws-cdk-lib's "There are no 'Isolated' subnet groups", which does
 * not say that the kit chose them.
 */
export function kitSubnets(scope: IConstruct, vpc: ec2.IVpc, vpcSubnets: ec2.SubnetSelection | undefined): ec2.SubnetSelection {
  if (vpcSubnets !== undefined) return vpcSubnets;
  throwIfInvalid(scope, [
    vpc.isolatedSubnets.length === 0
      ? `vpcSubnets is not set and VPC ${vpc.node.path} has no isolated subnets, where the kit places it by default (SubnetType.PRIVATE_ISOLATED): pass vpcSubnets, e.g. { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }, or add isolated subnets to the VPC`
      : undefined,
  ]);
  return { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
}
