"""The reference deployment (bin/app.ts, lib/reference-app/reference-deployment.ts) written against the
Python package: a data VPC with the Optimized Reads cluster, its RDS Proxy and the role bootstrap (which makes
the Secrets Manager endpoint it needs), a consumer VPC with a read-only and a read/write proxy endpoint and a
Lambda consumer behind each, the dashboard and its alarms. The same construct ids, so the same logical
ids: test/integration/package/python-package.test.ts compares this template with the TypeScript one.
"""
import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_logs as logs
from aurora_proxy_kit import (
    LambdaConsumer,
    Dashboard,
    DatabaseRoleBootstrap,
    DatabaseRoleSpec,
    EndpointRole,
    AuroraOptimizedReads,
    RdsProxy,
)

app = cdk.App()
stack = cdk.Stack(app, "AuroraProxyKit")

log_key = kms.Key(
    stack,
    "LogKey",
    enable_key_rotation=True,
    removal_policy=cdk.RemovalPolicy.RETAIN,
    pending_window=cdk.Duration.days(30),
)
# CloudWatch Logs may use the key for this stack's log groups only.
log_key.add_to_resource_policy(
    iam.PolicyStatement(
        actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
        principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
        resources=["*"],
        conditions={
            "ArnLike": {
                "kms:EncryptionContext:aws:logs:arn": f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:{stack.stack_name}-*"
            }
        },
    )
)


def isolated_vpc(id: str, cidr: str) -> ec2.Vpc:
    vpc = ec2.Vpc(
        stack,
        id,
        ip_addresses=ec2.IpAddresses.cidr(cidr),
        max_azs=3,
        nat_gateways=0,
        subnet_configuration=[ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=22)],
    )
    flow_logs = logs.LogGroup(stack, f"{id}FlowLogs", retention=logs.RetentionDays.ONE_MONTH, encryption_key=log_key)
    vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
    return vpc


data_vpc = isolated_vpc("DataVpc", "10.10.0.0/16")
consumer_vpc = isolated_vpc("ConsumerVpc", "10.20.0.0/16")

database = AuroraOptimizedReads(stack, "Database", vpc=data_vpc)
proxy = RdsProxy(stack, "Proxy", cluster=database)

# Each consumer logs in as a role of its own, never as the master user.
database_roles = DatabaseRoleBootstrap(
    stack,
    "DatabaseRoles",
    cluster=database,
    roles=[
        DatabaseRoleSpec(name="app_reader", access=EndpointRole.READ_ONLY),
        DatabaseRoleSpec(name="app_writer", access=EndpointRole.READ_WRITE),
    ],
    encryption_key=log_key,
)

# The role bootstrap makes the data VPC's Secrets Manager endpoint it reads the master secret through (api_routes CREATE).

read_only = proxy.add_read_only_endpoint("ReadOnly", vpc=consumer_vpc)
read_write = proxy.add_read_write_endpoint("ReadWrite", vpc=consumer_vpc)

reader = LambdaConsumer(
    stack, "Reader", endpoint=read_only, db_user="app_reader", database_name=database.database_name, encryption_key=log_key
)
writer = LambdaConsumer(
    stack, "Writer", endpoint=read_write, db_user="app_writer", database_name=database.database_name, encryption_key=log_key
)
for consumer in (reader, writer):
    consumer.node.add_dependency(database_roles)

dashboard = Dashboard(stack, "Dashboard", cluster=database, proxy=proxy, functions=[reader, writer])



def js_number(n: float) -> str:
    """A number as JavaScript's String() writes it (5000, not 5000.0), as the TypeScript app outputs it."""
    return str(int(n)) if float(n).is_integer() else str(n)


sizing = database.sizing
for id, value in {
    "InstanceClass": database.instance_class,
    "EngineVersion": database.engine_version,
    "TieredCacheGiB": js_number(sizing.tiered_cache_gib),
    "TemporaryObjectsGiB": js_number(sizing.temporary_objects_gib),
    "MaxConnections": js_number(sizing.max_connections),
    "ProxyEngine": proxy.engine.value,
    "ProxyMaxServerConnections": js_number(proxy.pool_sizing.max_server_connections),
    "ReservedConnections": js_number(proxy.pool_sizing.reserved_connections),
    "ReadOnlyEndpoint": read_only.hostname,
    "ReadWriteEndpoint": read_write.hostname,
    "ReaderFunction": reader.function.function_name,
    "WriterFunction": writer.function.function_name,
    "DashboardName": dashboard.dashboard.dashboard_name,
}.items():
    cdk.CfnOutput(stack, id, value=value)

app.synth()
