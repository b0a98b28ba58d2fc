import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';

/**
 * Lets `client` reach an endpoint's security group on `port`, with each rule in a stack the dependency allows.
 *
 * In one stack this is `connections.allowDefaultPortFrom` as before. When a client's security group is in
 * another stack than the endpoint's (consumers in their own stack, which reads the endpoint's host name and so
 * depends on the endpoint's stack), both rules go in the client's stack: the ingress as a standalone rule on
 * the endpoint's group (aws-cdk-lib's remote rule), the egress on the client's own group. Rules in the
 * endpoint's stack would name the client's group and make that stack depend back on the client's: a cycle.
 */
export function allowEndpointIngress(endpointGroup: ec2.ISecurityGroup, endpointConnections: ec2.Connections, port: number, client: ec2.IConnectable, description: string): void {
  const endpointStack = Stack.of(endpointGroup);
  const remote = client.connections.securityGroups.filter((group) => Stack.of(group) !== endpointStack);
  if (remote.length === 0) {
    endpointConnections.allowDefaultPortFrom(client, description);
    return;
  }
  for (const group of client.connections.securityGroups) {
    // remoteRule: true places the ingress beside `group`, in its stack, when the stacks differ.
    endpointGroup.addIngressRule(group, ec2.Port.tcp(port), description, true);
    group.addEgressRule(endpointGroup, ec2.Port.tcp(port), description);
  }
}
