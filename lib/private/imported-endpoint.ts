import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { EndpointRole } from '../model';
import type { ConsumerConnection, IProxyEndpoint, ProxyEngine } from '../pooling-tier';
import { allowEndpointIngress } from './endpoint-ingress';

/** What an imported endpoint is, and how its engine logs a consumer in. */
export interface ImportedEndpointProps {
  readonly engine: ProxyEngine;
  readonly role: EndpointRole;
  readonly vpc: ec2.IVpc;
  readonly hostname: string;
  readonly port: number;
  readonly securityGroupId: string;
  /** The connection details of `dbUser` (throws when the import cannot give them). */
  readonly consumerConnection: (dbUser: string) => ConsumerConnection;
  /** The credential of `dbUser` given to `grantee`. */
  readonly grantCredential: (grantee: iam.IGrantable, dbUser: string) => iam.Grant;
}

/**
 * An endpoint of another stack or app (RdsProxyEndpoint.fromRdsProxyEndpointAttributes,
 * PgBouncerProxyEndpoint.fromPgBouncerProxyEndpointAttributes): its security group imported by id, so the
 * ingress a consumer is granted is made in the consumer's stack.
 */
export class ImportedProxyEndpoint extends Construct implements IProxyEndpoint {
  public readonly engine: ProxyEngine;
  public readonly role: EndpointRole;
  public readonly vpc: ec2.IVpc;
  public readonly hostname: string;
  public readonly port: number;
  public readonly securityGroup: ec2.ISecurityGroup;
  public readonly connections: ec2.Connections;
  private readonly props: ImportedEndpointProps;

  constructor(scope: Construct, id: string, props: ImportedEndpointProps) {
    super(scope, id);
    this.props = props;
    this.engine = props.engine;
    this.role = props.role;
    this.vpc = props.vpc;
    this.hostname = props.hostname;
    this.port = props.port;
    // An endpoint only answers: no egress is assumed, so none is added to a consumer's egress by mistake.
    this.securityGroup = ec2.SecurityGroup.fromSecurityGroupId(this, 'SecurityGroup', props.securityGroupId, { allowAllOutbound: false });
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup], defaultPort: ec2.Port.tcp(props.port) });
  }

  public consumerConnection(dbUser: string): ConsumerConnection {
    return this.props.consumerConnection(dbUser);
  }

  public grantConnect(consumer: iam.IGrantable & ec2.IConnectable, dbUser: string): iam.Grant {
    allowEndpointIngress(this.securityGroup, this.connections, this.port, consumer, `${this.role} clients`);
    return this.props.grantCredential(consumer, dbUser);
  }
}
