import { Fn } from 'cdktn';
import type { Construct } from 'constructs';
import { AwsData, AwsResource } from './raw-aws';

export interface IsolatedVpc {
  readonly id: string;
  /** The VPC's CIDR block: the configured value, known at plan (the PgBouncer module keys its egress rules by it). */
  readonly cidrBlock: string;
  readonly subnetIds: string[];
  readonly routeTableIds: string[];
}

/**
 * The examples' two VPCs (data, consumer), as the HCL examples make them: isolated subnets in two
 * Availability Zones (as the environment-agnostic CDK stack uses), each with a route table of its own and
 * no route out. The resources' ids are the HCL examples' addresses, so both plans compare address by address.
 */
export function isolatedVpcs(scope: Construct, name: string, azs: AwsData): Record<'data' | 'consumer', IsolatedVpc> {
  const make = (vpc: string, cidr: string): IsolatedVpc => {
    const network = new AwsResource(scope, `vpc_${vpc}`, 'aws_vpc', { cidr_block: cidr, enable_dns_support: true, enable_dns_hostnames: true, tags: { Name: `${name}-${vpc}` } });
    const subnets = [0, 1].map((i) => {
      const subnet = new AwsResource(scope, `subnet_${vpc}_${i}`, 'aws_subnet', {
        vpc_id: network.getStringAttribute('id'),
        availability_zone: Fn.element(azs.getListAttribute('names'), i),
        cidr_block: Fn.cidrsubnet(cidr, 6, i),
        tags: { Name: `${name}-${vpc}-${i}-isolated` },
      });
      const routes = new AwsResource(scope, `routes_${vpc}_${i}`, 'aws_route_table', { vpc_id: network.getStringAttribute('id'), tags: { Name: `${name}-${vpc}-${i}-isolated` } });
      new AwsResource(scope, `routes_${vpc}_${i}_association`, 'aws_route_table_association', { subnet_id: subnet.getStringAttribute('id'), route_table_id: routes.getStringAttribute('id') });
      return { id: subnet.getStringAttribute('id'), routeTableId: routes.getStringAttribute('id') };
    });
    return { id: network.getStringAttribute('id'), cidrBlock: network.getStringAttribute('cidr_block'), subnetIds: subnets.map((s) => s.id), routeTableIds: subnets.map((s) => s.routeTableId) };
  };
  return { data: make('data', '10.10.0.0/16'), consumer: make('consumer', '10.20.0.0/16') };
}
