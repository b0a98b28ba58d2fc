import { App, CfnElement, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

/** The context that has the app's synth bundle its Lambda code (the unit project's setup turns bundling off). */
export const BUNDLING = { 'aws:cdk:bundling-stacks': ['**'] };

/**
 * A fresh app and an environment-agnostic stack, as aws-cdk-lib's own tests build them; `context` (e.g.
 * BUNDLING for a test that reads the bundled code) as the command line passes it, so it wins over
 * CDK_CONTEXT_JSON.
 */
export function newStack(id = 'Stack', context: Record<string, unknown> = {}): { app: App; stack: Stack } {
  const app = new App({ postCliContext: context });
  return { app, stack: new Stack(app, id) };
}

/** A VPC with isolated subnets only (no NAT, no internet gateway), like the reference deployment's. */
export function isolatedVpc(scope: Construct, id: string, cidr: string): ec2.Vpc {
  return new ec2.Vpc(scope, id, {
    ipAddresses: ec2.IpAddresses.cidr(cidr),
    maxAzs: 2,
    natGateways: 0,
    subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The exact error a kit construct throws (KitValidationError): every violation on its own line,
 * prefixed with the construct path. Use with `toThrow`.
 */
export function kitError(constructPath: string, ...violations: string[]): RegExp {
  return new RegExp(`^${escapeRegExp(violations.map((v) => `${constructPath}: ${v}`).join('\n'))}$`);
}

/** The logical ID of a construct's default CloudFormation resource. */
export function logicalIdOf(construct: Construct): string {
  const resource = construct.node.defaultChild ?? construct;
  return Stack.of(construct).getLogicalId(resource as CfnElement);
}

/** `{ Fn::GetAtt: [logicalId, attr] }` of a construct's default resource. */
export function getAtt(construct: Construct, attribute: string): { 'Fn::GetAtt': [string, string] } {
  return { 'Fn::GetAtt': [logicalIdOf(construct), attribute] };
}

/** `{ Ref: logicalId }` of a construct's default resource. */
export function ref(construct: Construct): { Ref: string } {
  return { Ref: logicalIdOf(construct) };
}

/** Resolved `Ref`s of a VPC's isolated subnets, in order. */
export function isolatedSubnetRefs(vpc: ec2.IVpc): unknown[] {
  return vpc.isolatedSubnets.map((s) => Stack.of(vpc).resolve(s.subnetId));
}

/**
 * Turns a synthesized `Fn::Join` (e.g. a DashboardBody) into one string, writing each intrinsic as
 * `{{Ref:LogicalId}}` or `{{LogicalId.Attribute}}` so the result stays parseable JSON.
 */
export function joinIntrinsic(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`not a string or Fn::Join: ${JSON.stringify(value)}`);
  const [separator, parts] = join;
  return parts.map((part) => (typeof part === 'string' ? part : placeholder(part))).join(separator);
}

function placeholder(part: unknown): string {
  const p = part as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (p.Ref) return `{{Ref:${p.Ref}}}`;
  if (p['Fn::GetAtt']) return `{{${p['Fn::GetAtt'][0]}.${p['Fn::GetAtt'][1]}}}`;
  return '{{Token}}';
}
