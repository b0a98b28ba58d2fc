import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Dashboard } from '../../../lib/dashboard';
import { ReferenceDeployment } from '../../../lib/reference-app/reference-deployment';
import { DEFAULT_AUTO_MINOR_VERSION_UPGRADE, ENGINE_SCOPES, KMS_DELETION_WINDOW_DAYS, METRIC_CATALOG, MASTER_SECRET_READ_ACTIONS, postgresLogGroupName } from '../../../lib/model';
import { AuroraOptimizedReads } from '../../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../../lib/pgbouncer-proxy';
import { AlarmPath, TEST_ENV, judgeAlarmPath, templateAlarmPaths } from '../../helpers/alarm-permissions';
import { isolatedVpc, joinIntrinsic, newStack } from '../../helpers/cdk';
import { PolicyStatement } from '../../helpers/policy-evaluation';
import type { PlanOfResources } from '../../../lib/terraform/plan-json';
import { ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * Parity of the two flavours: the CDK reference app (bin/app.ts, synthesized here with its default
 * settings, as `make synth` writes cdk.out/AuroraProxyKit.template.json) and the planned
 * modules/examples/complete must have the same inventory: resource counts per kind and the properties that
 * matter. A change to one flavour alone fails here.
 */

type Props = Record<string, unknown>;

/** CloudFormation type -> Terraform type, for the kinds both flavours create one for one. */
const TYPE_MAP: Record<string, string> = {
  'AWS::RDS::DBCluster': 'aws_rds_cluster',
  'AWS::RDS::DBInstance': 'aws_rds_cluster_instance',
  'AWS::RDS::DBClusterParameterGroup': 'aws_rds_cluster_parameter_group',
  'AWS::RDS::DBSubnetGroup': 'aws_db_subnet_group',
  'AWS::RDS::DBProxy': 'aws_db_proxy',
  'AWS::RDS::DBProxyTargetGroup': 'aws_db_proxy_default_target_group',
  'AWS::RDS::DBProxyEndpoint': 'aws_db_proxy_endpoint',
  'AWS::Lambda::Function': 'aws_lambda_function',
  'AWS::CloudWatch::Alarm': 'aws_cloudwatch_metric_alarm',
  'AWS::CloudWatch::Dashboard': 'aws_cloudwatch_dashboard',
  'AWS::SNS::Topic': 'aws_sns_topic',
  'AWS::SNS::TopicPolicy': 'aws_sns_topic_policy',
  'AWS::KMS::Key': 'aws_kms_key',
  'AWS::EC2::VPC': 'aws_vpc',
  'AWS::EC2::Subnet': 'aws_subnet',
  'AWS::EC2::RouteTable': 'aws_route_table',
  'AWS::EC2::SubnetRouteTableAssociation': 'aws_route_table_association',
  'AWS::EC2::FlowLog': 'aws_flow_log',
  'AWS::EC2::VPCEndpoint': 'aws_vpc_endpoint',
  'AWS::EC2::SecurityGroup': 'aws_security_group',
  'AWS::EC2::SecurityGroupIngress': 'aws_vpc_security_group_ingress_rule',
  'AWS::EC2::SecurityGroupEgress': 'aws_vpc_security_group_egress_rule',
  'AWS::Logs::LogGroup': 'aws_cloudwatch_log_group',
  'AWS::IAM::Role': 'aws_iam_role',
  'AWS::IAM::Policy': 'aws_iam_role_policy',
  'Custom::DatabaseRoles': 'aws_lambda_invocation',
};

/**
 * What CDK creates that has no Terraform counterpart by design: aws-cdk-lib's custom resource that
 * strips each VPC's default security group (its handler Lambda and role), the custom resource provider
 * framework that answers CloudFormation for the role bootstrap (Terraform invokes the function itself),
 * and CDK metadata. Security group rules are compared as resources: one per permission in both flavours.
 */
function isCdkMachinery(id: string, type: string): boolean {
  return (
    type === 'AWS::CDK::Metadata' ||
    (type.startsWith('Custom::') && type !== 'Custom::DatabaseRoles') ||
    id.startsWith('CustomVpcRestrictDefaultSG') ||
    id.startsWith('DatabaseRolesProviderframework')
  );
}

/** The database user at the end of an rds-db:connect ARN. */
const dbUserOf = (arn: string) => arn.slice(arn.lastIndexOf('/') + 1);

interface Inventory {
  counts: Record<string, number>;
  cluster: Props;
  instances: Props[];
  proxy: Props;
  pool: Props;
  endpointRoles: string[];
  functions: Props[];
  alarms: Props[];
  topicEncrypted: boolean;
  alarmPaths: AlarmPath[];
  dashboardMetrics: string[];
  dashboardLines: string[];
  /** Each KMS key: its deletion window and the operator of its CloudWatch Logs condition (null: none). */
  keys: Props[];
  /** The cluster key's CloudWatch Logs scope: the log group ARN, account, region and partition left out. */
  clusterKeyLogGroups: string[];
  /** How many log groups outlive a destroy / how many there are. */
  logGroupsRetained: [number, number];
  secretsEndpoint: Props;
  /** The users the proxy role may log in to the cluster as, and the roles the bootstrap makes. */
  /** proxyActions: every distinct action of the proxy role's policies. */
  databaseUsers: { proxy: string[]; proxyActions: string[]; bootstrap: Props[] };
}

/** The log group part of a CloudWatch Logs encryption-context ARN, `<cluster>` for the cluster identifier. */
const logGroupOf = (arn: string, clusterIdentifier: string) => arn.replace(/^.*:log-group:/, '').replace(clusterIdentifier, '<cluster>');

/** The CloudWatch Logs statement of a key policy, when it has one. */
function logsStatement(policy: { Statement: Props[] }): Props | undefined {
  return policy.Statement.find((st) => st.Sid === 'CloudWatchLogsEncrypt');
}

/** A CloudFormation Fn::Join of literals and pseudo-parameter Refs, as the string AWS would see (account etc. kept as names). */
function joined(value: unknown): string {
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) return String(value);
  return join[1].map((part) => (typeof part === 'string' ? part : `\${${(part as { Ref: string }).Ref}}`)).join(join[0]);
}

const sorted = <T>(items: T[]): T[] => [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** An alarm's name without the flavour's prefix (the dashboard's name, or a name CDK derives): WriterCpu. */
const alarmId = (name: string) => name.slice(name.lastIndexOf('-') + 1);

/** Dimension names, with the values that are fixed words rather than resource names (RDS Proxy's target group `default`, roles). */
function dimensionText(dimensions: Record<string, string>): string {
  return Object.keys(dimensions)
    .sort()
    .map((k) => ((k === 'TargetGroup' && dimensions[k] === 'default') || k === 'TargetRole' || k === 'Listener' ? `${k}=${dimensions[k]}` : k))
    .join(',');
}

/** Each graph line of a dashboard body: the graph's title, the metric, its dimensions and statistic. */
function dashboardLines(body: string): string[] {
  const widgets = (JSON.parse(body) as { widgets: Array<{ properties: { title?: string; metrics?: unknown[][] } }> }).widgets;
  return widgets
    .flatMap((w) =>
      (w.properties.metrics ?? []).map((line) => {
        const strings = line.filter((p): p is string => typeof p === 'string');
        const options = (line.find((p) => typeof p === 'object') ?? {}) as { stat?: string };
        const dimensions: Record<string, string> = {};
        for (let i = 2; i + 1 < strings.length; i += 2) dimensions[strings[i]] = strings[i + 1];
        // A CDK dashboard line leaves out `stat` when it is CloudWatch's default, Average.
        return `${w.properties.title}: ${strings[0]} ${strings[1]} ${dimensionText(dimensions)} ${options.stat ?? 'Average'}`;
      }),
    )
    .sort();
}

/** The metrics an expression alarm reads (none for a single-metric alarm), with their query ids. */
function metricStats(alarm: Props): Array<{ Id: string; Stat: string; Metric: { MetricName: string; Dimensions: unknown } }> {
  return ((alarm.Metrics as Array<{ Id: string; MetricStat?: { Stat: string; Metric: { MetricName: string; Dimensions: unknown } } }> | undefined) ?? [])
    .filter((m) => m.MetricStat)
    .map((m) => ({ Id: m.Id, ...m.MetricStat! }));
}

/** A CloudFormation alarm as the flavours are compared: its name without the prefix, metric or expression, dimension names, inputs, thresholds. */
function cdkAlarm(a: Props): Props {
  return {
    name: alarmId(a.AlarmName as string),
    metric: a.MetricName ?? (a.Metrics as Props[]).find((m) => m.Expression)!.Expression,
    statistic: a.Statistic ?? null,
    dimensions: dimensionText(
      Object.fromEntries(((a.Dimensions ?? metricStats(a)[0].Metric.Dimensions) as Array<{ Name: string; Value: unknown }>).map((d) => [d.Name, String(d.Value)])),
    ),
    inputs: metricStats(a).map((m) => `${m.Id} ${m.Metric.MetricName} ${m.Stat}`).sort(),
    threshold: a.Threshold,
    comparison: a.ComparisonOperator,
    evaluationPeriods: a.EvaluationPeriods,
    datapointsToAlarm: a.DatapointsToAlarm,
    treatMissingData: a.TreatMissingData,
  };
}

/** A planned Terraform alarm, as cdkAlarm describes a CloudFormation one. */
function tfAlarm(a: Props): Props {
  return {
    name: alarmId(a.alarm_name as string),
    metric: a.metric_name ?? (a.metric_query as Props[]).find((q) => q.expression)!.expression,
    statistic: a.statistic ?? null,
    dimensions: dimensionText((a.dimensions ?? ((a.metric_query as Props[]).find((q) => (q.metric as Props[]).length > 0)!.metric as Props[])[0].dimensions) as Record<string, string>),
    inputs: ((a.metric_query as Props[] | undefined) ?? [])
      .filter((q) => (q.metric as Props[]).length > 0)
      .map((q) => `${q.id} ${(q.metric as Props[])[0].metric_name} ${(q.metric as Props[])[0].stat}`)
      .sort(),
    threshold: a.threshold,
    comparison: a.comparison_operator,
    evaluationPeriods: a.evaluation_periods,
    datapointsToAlarm: a.datapoints_to_alarm,
    treatMissingData: a.treat_missing_data,
  };
}

const pathsSorted = (paths: AlarmPath[]) => sorted(paths.map((p) => ({ ...p, alarm: alarmId(p.alarm) })));

function cdkInventory(): Inventory {
  const stack = new ReferenceDeployment(new App(), 'AuroraProxyKit');
  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Props }>;
  const of = (type: string) => Object.entries(resources).filter(([id, r]) => r.Type === type && !isCdkMachinery(id, r.Type)).map(([, r]) => r.Properties);
  const counts: Record<string, number> = {};
  for (const [id, r] of Object.entries(resources)) {
    if (isCdkMachinery(id, r.Type) || !TYPE_MAP[r.Type]) continue;
    counts[TYPE_MAP[r.Type]] = (counts[TYPE_MAP[r.Type]] ?? 0) + 1;
  }
  const cluster = of('AWS::RDS::DBCluster')[0];
  const proxy = of('AWS::RDS::DBProxy')[0];
  const pool = of('AWS::RDS::DBProxyTargetGroup')[0].ConnectionPoolConfigurationInfo as Props;
  const proxyRoleId = (proxy.RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  const proxyStatements = of('AWS::IAM::Policy')
    .filter((p) => JSON.stringify(p.Roles) === JSON.stringify([{ Ref: proxyRoleId }]))
    .flatMap((p) => (p.PolicyDocument as { Statement: Array<{ Action: string; Resource: unknown }> }).Statement);
  const proxyConnects = proxyStatements.filter((st) => st.Action === 'rds-db:connect').flatMap((st) => [st.Resource].flat().map((r) => dbUserOf(joined(r))));
  const bootstrapFunction = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && (r.Properties.Environment as { Variables: Props } | undefined)?.Variables.DB_MASTER_SECRET_ARN)!;
  const body = JSON.stringify(of('AWS::CloudWatch::Dashboard')[0].DashboardBody);
  const keys = of('AWS::KMS::Key');
  const clusterKey = keys.find((k) => String(k.Description).includes('Aurora cluster'))!;
  const clusterKeyLogs = logsStatement(clusterKey.KeyPolicy as { Statement: Props[] })!.Condition as Record<string, Record<string, unknown[]>>;
  const logGroups = Object.values(resources).filter((r) => r.Type === 'AWS::Logs::LogGroup') as Array<{ DeletionPolicy?: string }>;
  const endpoint = of('AWS::EC2::VPCEndpoint')[0];
  const endpointSgId = (endpoint.SecurityGroupIds as Array<{ 'Fn::GetAtt': string[] }>)[0]['Fn::GetAtt'][0];
  const endpointEgress = [
    ...((resources[endpointSgId].Properties.SecurityGroupEgress as Props[] | undefined) ?? []).filter((e) => e.Description !== 'Disallow all traffic'),
    ...of('AWS::EC2::SecurityGroupEgress').filter((e) => JSON.stringify(e.GroupId).includes(endpointSgId)),
  ];
  const endpointStatement = (endpoint.PolicyDocument as { Statement: Props[] } | undefined)?.Statement ?? [];
  const secretArn = JSON.stringify({ 'Fn::GetAtt': [Object.keys(resources).find((id) => resources[id].Type === 'AWS::RDS::DBCluster'), 'MasterUserSecret.SecretArn'] });
  return {
    counts,
    cluster: {
      engine: cluster.Engine,
      engineVersion: cluster.EngineVersion,
      storageType: cluster.StorageType,
      storageEncrypted: cluster.StorageEncrypted,
      iamAuth: cluster.EnableIAMDatabaseAuthentication,
      managedPassword: cluster.ManageMasterUserPassword,
      deletionProtection: cluster.DeletionProtection,
      backupRetention: cluster.BackupRetentionPeriod,
      logExports: cluster.EnableCloudwatchLogsExports,
      copyTagsToSnapshot: cluster.CopyTagsToSnapshot,
      autoMinorVersionUpgrade: cluster.AutoMinorVersionUpgrade,
    },
    instances: sorted(
      of('AWS::RDS::DBInstance').map((i) => ({
        instanceClass: i.DBInstanceClass,
        promotionTier: i.PromotionTier,
        performanceInsights: i.EnablePerformanceInsights,
        monitoringInterval: i.MonitoringInterval,
        publiclyAccessible: i.PubliclyAccessible,
        caCertificate: i.CACertificateIdentifier,
        autoMinorVersionUpgrade: i.AutoMinorVersionUpgrade,
        ownEngineVersion: i.EngineVersion !== undefined,
      })),
    ),
    proxy: {
      engineFamily: proxy.EngineFamily,
      requireTls: proxy.RequireTLS,
      debugLogging: proxy.DebugLogging,
      idleClientTimeout: proxy.IdleClientTimeout,
      defaultAuthScheme: proxy.DefaultAuthScheme,
      secretAuthEntries: ((proxy.Auth as Props[] | undefined) ?? []).length,
    },
    pool: { max: pool.MaxConnectionsPercent, idle: pool.MaxIdleConnectionsPercent, borrow: pool.ConnectionBorrowTimeout },
    endpointRoles: of('AWS::RDS::DBProxyEndpoint').map((e) => e.TargetRole as string).sort(),
    functions: sorted(
      of('AWS::Lambda::Function').map((f) => ({
        runtime: f.Runtime,
        architectures: f.Architectures,
        memorySize: f.MemorySize,
        timeout: f.Timeout,
        tracing: (f.TracingConfig as Props).Mode,
        environment: Object.keys((f.Environment as { Variables: Props }).Variables).sort(),
        role: (f.Environment as { Variables: Props }).Variables.DB_ENDPOINT_ROLE,
        dbUser: (f.Environment as { Variables: Props }).Variables.DB_USER,
        tls: (f.Environment as { Variables: Props }).Variables.DB_TLS,
        inVpc: f.VpcConfig !== undefined,
        encryptedEnvironment: f.KmsKeyArn !== undefined,
      })),
    ),
    alarms: sorted(of('AWS::CloudWatch::Alarm').map(cdkAlarm)),
    topicEncrypted: of('AWS::SNS::Topic')[0].KmsMasterKeyId !== undefined,
    alarmPaths: pathsSorted(templateAlarmPaths({ Resources: resources })),
    dashboardMetrics: METRIC_CATALOG.map((m) => `${m.namespace} ${m.metricName}`).filter((k) => body.includes(JSON.stringify(k.split(' ')).slice(1, -1).replace(/"/g, '\\"'))),
    dashboardLines: dashboardLines(joinIntrinsic(of('AWS::CloudWatch::Dashboard')[0].DashboardBody)),
    keys: sorted(
      keys.map((k) => {
        const logs = logsStatement(k.KeyPolicy as { Statement: Props[] });
        return { deletionWindowDays: k.PendingWindowInDays ?? null, logsCondition: logs ? Object.keys(logs.Condition as Props)[0] : null };
      }),
    ),
    clusterKeyLogGroups: Object.values(Object.values(clusterKeyLogs)[0])[0].map((arn) => logGroupOf(joined(arn), String(cluster.DBClusterIdentifier))),
    logGroupsRetained: [logGroups.filter((g) => g.DeletionPolicy === 'Retain').length, logGroups.length],
    secretsEndpoint: {
      egressRules: endpointEgress.length,
      statements: endpointStatement.map((st) => ({
        actions: st.Action,
        principal: JSON.stringify((st.Principal as Props).AWS) === JSON.stringify(bootstrapFunction.Properties.Role) ? 'the role bootstrap' : JSON.stringify(st.Principal),
        resource: JSON.stringify(st.Resource) === secretArn ? 'the master secret' : JSON.stringify(st.Resource),
      })),
    },
    databaseUsers: {
      proxy: proxyConnects.sort(),
      proxyActions: [...new Set(proxyStatements.flatMap((st) => [st.Action].flat()))],
      bootstrap: (of('Custom::DatabaseRoles')[0].Request as { roles: Props[] }).roles,
    },
  };
}

function terraformInventory(plan: PlanOfResources): Inventory {
  const managed = plan.resource_changes.filter((r) => r.mode === 'managed');
  const of = (type: string) => managed.filter((r) => r.type === type).map((r) => r.change.after as Props);
  const counts: Record<string, number> = {};
  const tfTypes = new Set(Object.values(TYPE_MAP));
  for (const r of managed) if (tfTypes.has(r.type)) counts[r.type] = (counts[r.type] ?? 0) + 1;
  const cluster = of('aws_rds_cluster')[0];
  const proxy = of('aws_db_proxy')[0];
  const after = (address: string) => plan.resource_changes.find((r) => r.address === address)!.change.after as Props;
  const connectPolicy = after('module.proxy.data.aws_iam_policy_document.connect[0]');
  // The rds-db:connect ARNs carry the cluster's resource ID, known only after apply: the users come from the output.
  const proxyConnects = [...(plan.output_changes!.database_users.after as { proxy: string[] }).proxy];
  const pool = (of('aws_db_proxy_default_target_group')[0].connection_pool_config as Props[])[0];
  const body = of('aws_cloudwatch_dashboard')[0].dashboard_body as string;
  const policyOf = (key: Props) => JSON.parse(key.policy as string) as { Statement: Props[] };
  const clusterKey = of('aws_kms_key').find((k) => String(k.description).includes('Aurora cluster'))!;
  const clusterKeyLogs = logsStatement(policyOf(clusterKey))!.Condition as Record<string, Record<string, string | string[]>>;
  const logGroups = of('aws_cloudwatch_log_group');
  const endpointSg = 'aws_security_group.secrets_manager';
  const config = plan.configuration.root_module.resources;
  const expressions = (address: string) => config.find((r) => r.address === address)!.expressions as Record<string, unknown>;
  const policyRef = (expressions('aws_vpc_endpoint.secrets_manager').policy as { references: string[] }).references[1];
  const endpointStatements = (expressions(policyRef).statement ?? []) as Array<Record<string, unknown>>;
  return {
    counts,
    cluster: {
      engine: cluster.engine,
      engineVersion: cluster.engine_version,
      storageType: cluster.storage_type,
      storageEncrypted: cluster.storage_encrypted,
      iamAuth: cluster.iam_database_authentication_enabled,
      managedPassword: cluster.manage_master_user_password,
      deletionProtection: cluster.deletion_protection,
      backupRetention: cluster.backup_retention_period,
      logExports: cluster.enabled_cloudwatch_logs_exports,
      copyTagsToSnapshot: cluster.copy_tags_to_snapshot,
      autoMinorVersionUpgrade: cluster.auto_minor_version_upgrade,
    },
    instances: sorted(
      of('aws_rds_cluster_instance').map((i) => ({
        instanceClass: i.instance_class,
        promotionTier: i.promotion_tier,
        performanceInsights: i.performance_insights_enabled,
        monitoringInterval: i.monitoring_interval,
        publiclyAccessible: i.publicly_accessible,
        caCertificate: i.ca_cert_identifier,
        autoMinorVersionUpgrade: i.auto_minor_version_upgrade,
        // Unknown at plan (null in `after`) when not configured: the instance takes the cluster's.
        ownEngineVersion: (i.engine_version ?? null) !== null,
      })),
    ),
    proxy: {
      engineFamily: proxy.engine_family,
      requireTls: proxy.require_tls,
      debugLogging: proxy.debug_logging,
      idleClientTimeout: proxy.idle_client_timeout,
      defaultAuthScheme: proxy.default_auth_scheme,
      secretAuthEntries: ((proxy.auth as Props[] | undefined) ?? []).length,
    },
    pool: { max: pool.max_connections_percent, idle: pool.max_idle_connections_percent, borrow: pool.connection_borrow_timeout },
    endpointRoles: of('aws_db_proxy_endpoint').map((e) => e.target_role as string).sort(),
    functions: sorted(
      managed.filter((r) => r.type === 'aws_lambda_function').map((r) => {
        const f = r.change.after as Props;
        // Values known only after apply (the endpoint host, the key ARN) are in after_unknown.
        const unknown = (r.change.after_unknown ?? {}) as Props;
        const unknownVariables = (((unknown.environment as Props[] | undefined)?.[0]?.variables ?? {}) as Props);
        const variables = { ...unknownVariables, ...(((f.environment as Props[])[0].variables ?? {}) as Props) };
        return {
          runtime: f.runtime,
          architectures: f.architectures,
          memorySize: f.memory_size,
          timeout: f.timeout,
          tracing: (f.tracing_config as Props[])[0].mode,
          environment: Object.keys(variables).sort(),
          role: variables.DB_ENDPOINT_ROLE,
          dbUser: variables.DB_USER,
          tls: variables.DB_TLS,
          inVpc: (f.vpc_config as Props[]).length === 1,
          encryptedEnvironment: (f.kms_key_arn ?? null) !== null || unknown.kms_key_arn === true,
        };
      }),
    ),
    alarms: sorted(of('aws_cloudwatch_metric_alarm').map(tfAlarm)),
    topicEncrypted: of('aws_sns_topic')[0].kms_master_key_id !== null,
    alarmPaths: pathsSorted(terraformAlarmPaths(plan)),
    dashboardMetrics: METRIC_CATALOG.map((m) => `${m.namespace} ${m.metricName}`).filter((k) => body.includes(JSON.stringify(k.split(' ')).slice(1, -1))),
    dashboardLines: dashboardLines(body),
    keys: sorted(
      of('aws_kms_key').map((k) => {
        const logs = logsStatement(policyOf(k));
        return { deletionWindowDays: k.deletion_window_in_days ?? null, logsCondition: logs ? Object.keys(logs.Condition as Props)[0] : null };
      }),
    ),
    clusterKeyLogGroups: [Object.values(Object.values(clusterKeyLogs)[0])[0]].flat().map((arn) => logGroupOf(arn, String(cluster.cluster_identifier))),
    logGroupsRetained: [logGroups.filter((g) => g.skip_destroy === true).length, logGroups.length],
    secretsEndpoint: {
      // Terraform removes the allow-all rule AWS adds to a new group: only inline or separate rules could open it.
      egressRules:
        ((of('aws_security_group').find((g) => String(g.description).startsWith('Secrets Manager interface endpoint'))!.egress as Props[] | undefined) ?? []).length +
        config.filter((r) => r.type === 'aws_vpc_security_group_egress_rule' && JSON.stringify(r.expressions).includes(endpointSg)).length,
      statements: endpointStatements.map((st) => {
        const refs = (field: unknown) => ((field as { references?: string[] }).references ?? [])[0];
        const principals = (st.principals as Array<Record<string, unknown>>)[0];
        return {
          actions: (st.actions as { constant_value: string[] }).constant_value,
          principal: refs(principals.identifiers) === 'module.database_roles.role_arn' ? 'the role bootstrap' : JSON.stringify(principals),
          resource: refs(st.resources) === 'module.database.master_user_secret_arn' ? 'the master secret' : JSON.stringify(st.resources),
        };
      }),
    },
    databaseUsers: {
      proxy: proxyConnects.sort(),
      proxyActions: [...new Set((connectPolicy.statement as Props[]).flatMap((st) => st.actions as string[]))],
      bootstrap: (JSON.parse(after('module.database_roles.aws_lambda_invocation.this').input as string) as { roles: Props[] }).roles,
    },
  };
}

/**
 * The planned alarm paths: every alarm's actions are the dashboard module's topic (its ARN, and so the
 * alarm actions and the topic policy's Resource, are known only after apply), judged against the planned
 * topic policy statements and key policy.
 */
function terraformAlarmPaths(plan: PlanOfResources): AlarmPath[] {
  const change = (address: string) => plan.resource_changes.find((r) => r.address === address)!.change;
  const { partition, region, account } = TEST_ENV;
  const topicArn = `arn:${partition}:sns:${region}:${account}:${(change('module.dashboard.aws_sns_topic.alarms[0]').after as Props).name as string}`;
  const keyArn = `arn:${partition}:kms:${region}:${account}:key/alarm-topic`;
  const topicStatements = ((change('module.dashboard.data.aws_iam_policy_document.topic[0]').after as Props).statement as Props[]).map(
    (s): PolicyStatement => {
      const principals = s.principals as Array<{ type: string; identifiers: string[] }>;
      const conditions: Record<string, Record<string, string[]>> = {};
      for (const c of s.condition as Array<{ test: string; variable: string; values: string[] }>) {
        if (conditions[c.test]?.[c.variable]) throw new Error(`two ${c.test} conditions on ${c.variable}`);
        conditions[c.test] = { ...conditions[c.test], [c.variable]: c.values };
      }
      return {
        Sid: s.sid as string,
        Effect: (s.effect as 'Allow' | 'Deny' | null) ?? 'Allow',
        Principal: principals.some((p) => p.type === '*') ? '*' : Object.fromEntries(principals.map((p) => [p.type, p.identifiers])),
        Action: s.actions as string[],
        Resource: (s.resources as Array<string | null>).map((r) => r ?? topicArn),
        Condition: conditions,
      };
    },
  );
  const keyStatements = (JSON.parse((change('module.dashboard.aws_kms_key.alarm_topic[0]').after as Props).policy as string) as { Statement: PolicyStatement[] }).Statement;
  return plan.resource_changes
    .filter((r) => r.type === 'aws_cloudwatch_metric_alarm')
    .flatMap((r) => {
      const a = r.change.after as Props;
      const actions = [...(a.alarm_actions as unknown[]), ...(a.ok_actions as unknown[])];
      return actions.map(() => judgeAlarmPath(a.alarm_name as string, { arn: topicArn, statements: topicStatements }, { arn: keyArn, statements: keyStatements }));
    });
}

describe('CDK reference app and Terraform complete example', () => {
  let cdk: Inventory;
  let tf: Inventory;
  const complete = new TerraformDir(path.join(ROOT, 'modules', 'examples', 'complete'));

  beforeAll(() => {
    tf = terraformInventory(complete.planJson());
    cdk = cdkInventory();
  }, 300_000);
  afterAll(() => complete.dispose());

  test('the same resources per kind', () => {
    expect(tf.counts).toEqual(cdk.counts);
  });

  test.each(['cluster', 'instances', 'proxy', 'pool', 'endpointRoles', 'functions', 'alarms', 'topicEncrypted', 'dashboardLines'] as const)('the same %s', (key) => {
    expect(tf[key]).toEqual(cdk[key]);
  });

  test('minor engine upgrades are off on the cluster and every instance, and no instance pins a version of its own', () => {
    for (const flavour of [cdk, tf]) {
      expect(flavour.cluster.autoMinorVersionUpgrade).toBe(DEFAULT_AUTO_MINOR_VERSION_UPGRADE);
      expect(flavour.instances.map((i) => [i.autoMinorVersionUpgrade, i.ownEngineVersion])).toEqual(flavour.instances.map(() => [false, false]));
    }
  });

  test('the keys: the same deletion windows, and CloudWatch Logs scoped to log groups (exact for the cluster key)', () => {
    expect(tf.keys).toEqual(cdk.keys);
    expect(cdk.keys.filter((k) => k.logsCondition !== null)).toEqual(
      sorted([
        { deletionWindowDays: KMS_DELETION_WINDOW_DAYS, logsCondition: 'ArnEquals' },
        { deletionWindowDays: KMS_DELETION_WINDOW_DAYS, logsCondition: 'ArnLike' },
      ]),
    );
    expect(tf.clusterKeyLogGroups).toEqual(cdk.clusterKeyLogGroups);
    expect(cdk.clusterKeyLogGroups).toEqual([postgresLogGroupName('<cluster>')]);
  });

  test('every log group outlives a destroy', () => {
    expect(tf.logGroupsRetained).toEqual(cdk.logGroupsRetained);
    expect(cdk.logGroupsRetained[0]).toBe(cdk.logGroupsRetained[1]);
  });

  test('the Secrets Manager endpoint opens no connection and passes only the role bootstrap\'s reads of the master secret', () => {
    expect(tf.secretsEndpoint).toEqual(cdk.secretsEndpoint);
    expect(cdk.secretsEndpoint).toEqual({
      egressRules: 0,
      statements: [{ actions: [...MASTER_SECRET_READ_ACTIONS], principal: 'the role bootstrap', resource: 'the master secret' }],
    });
  });

  test('end-to-end IAM: the proxy reads no secret and logs in as the consumers\' own roles, which the bootstrap makes; no consumer is the master user', () => {
    expect(tf.proxy).toMatchObject({ defaultAuthScheme: 'IAM_AUTH', secretAuthEntries: 0 });
    expect(tf.databaseUsers).toEqual(cdk.databaseUsers);
    expect(cdk.databaseUsers).toEqual({
      proxy: ['app_reader', 'app_writer'],
      proxyActions: ['rds-db:connect'],
      bootstrap: [{ name: 'app_reader', access: 'READ_ONLY' }, { name: 'app_writer', access: 'READ_WRITE' }],
    });
    for (const flavour of [cdk, tf]) {
      const consumers = flavour.functions.filter((f) => f.role !== undefined);
      expect(consumers.map((f) => [f.role, f.dbUser]).sort()).toEqual([['READ_ONLY', 'app_reader'], ['READ_WRITE', 'app_writer']]);
    }
  });

  test('CloudWatch may publish to the topic and use its key for every alarm action, in both', () => {
    expect(cdk.alarmPaths.length).toBeGreaterThan(0);
    for (const p of cdk.alarmPaths) expect(p).toEqual({ alarm: p.alarm, publish: 'allow', generateDataKey: 'allow', decrypt: 'allow' });
    expect(tf.alarmPaths).toEqual(cdk.alarmPaths);
  });

  test('both dashboards chart every catalog metric of the RDS Proxy engine', () => {
    const all = catalogOf('RDS_PROXY').map((m) => `${m.namespace} ${m.metricName}`);
    expect(tf.dashboardMetrics).toEqual(all);
    expect(cdk.dashboardMetrics).toEqual(all);
    expect(cdk.dashboardLines.length).toBeGreaterThan(all.length);
  });
});

/** The catalog a deployment of `engine` charts: every entry but the other engine's. */
function catalogOf(engine: keyof typeof ENGINE_SCOPES): typeof METRIC_CATALOG {
  const other = engine === 'RDS_PROXY' ? ENGINE_SCOPES.PGBOUNCER : ENGINE_SCOPES.RDS_PROXY;
  return METRIC_CATALOG.filter((m) => !other.includes(m.scope));
}

/** `namespace metricName` of catalog entries, each once, in catalog order. */
const metricKeys = (specs: typeof METRIC_CATALOG) => [...new Set(specs.map((m) => `${m.namespace} ${m.metricName}`))];

/** The catalog metrics a dashboard body charts, as metricKeys gives them. */
const chartedMetrics = (body: string) => metricKeys(METRIC_CATALOG).filter((k) => body.includes(JSON.stringify(k.split(' ')).slice(1, -1)));

/**
 * The PgBouncer engine's dashboard: Dashboard over a PgBouncerProxy (the example's cluster of a
 * writer and two readers, no consumer functions) against the dashboard module, planned with known inputs
 * (the example's are known only after apply, so its dashboard body is too) and as the planned
 * modules/examples/complete-pgbouncer wires it.
 */
describe('CDK Dashboard over a PgBouncerProxy and Terraform\'s dashboard module and complete-pgbouncer', () => {
  let cdk: { metrics: string[]; lines: string[]; alarms: Props[] };
  let tf: typeof cdk;
  let example: Props[];
  const module = new TerraformDir(path.join(ROOT, 'modules', 'dashboard'));
  const complete = new TerraformDir(path.join(ROOT, 'modules', 'examples', 'complete-pgbouncer'));

  /** The planned alarms; dimension values known only after apply (ARN suffixes, endpoint names) are in after_unknown, so their names are kept. */
  const plannedAlarms = (plan: PlanOfResources) =>
    sorted(
      plan.resource_changes
        .filter((r) => r.type === 'aws_cloudwatch_metric_alarm')
        .map((r) => {
          const after = r.change.after as Props;
          const afterUnknown = (r.change.after_unknown ?? {}) as Props;
          if (after.metric_query !== undefined && (after.metric_query as Props[]).length > 0) {
            // An expression alarm: its metrics' dimensions, known or not, are in its queries.
            const unknownQueries = (afterUnknown.metric_query ?? []) as Props[];
            const queries = (after.metric_query as Props[]).map((q, i) => {
              const metrics = q.metric as Props[];
              if (metrics.length === 0) return q;
              const unknownDims = (((unknownQueries[i]?.metric ?? []) as Props[])[0]?.dimensions ?? {}) as Record<string, boolean>;
              return { ...q, metric: [{ ...metrics[0], dimensions: { ...unknownDims, ...(metrics[0].dimensions as Record<string, string> | undefined) } }] };
            });
            return tfAlarm({ ...after, metric_query: queries });
          }
          const unknown = afterUnknown.dimensions as Record<string, boolean> | undefined;
          return tfAlarm({ ...after, dimensions: { ...unknown, ...(after.dimensions as Record<string, string>) } });
        }),
    );

  beforeAll(() => {
    // GIVEN the module with the example's shape of inputs, and the example itself
    const plan = module.planJson({
      dashboard_name: 'apk-pgbouncer',
      instance_identifiers: '["apk-pgbouncer-writer","apk-pgbouncer-reader-1","apk-pgbouncer-reader-2"]',
      pgbouncer_fleet_name: 'apk-pgbouncer',
      pgbouncer_targets: '{read_write="apk-pgbouncer",read_only=["apk-pgbouncer-reader-1","apk-pgbouncer-reader-2","apk-pgbouncer-writer"]}',
      pgbouncer_load_balancer_arn_suffix: 'net/apk-pgbouncer/50dc6c495c0c9188',
      pgbouncer_target_group_arn_suffixes: '{read_write="targetgroup/apk-pgbouncer-rw/73e2d6bc24d8a067",read_only="targetgroup/apk-pgbouncer-ro/943f017f100becff"}',
      pgbouncer_hosts: '2',
    });
    const body = (plan.resource_changes.find((r) => r.type === 'aws_cloudwatch_dashboard')!.change.after as Props).dashboard_body as string;
    tf = { metrics: chartedMetrics(body), lines: dashboardLines(body), alarms: plannedAlarms(plan) };
    example = plannedAlarms(complete.planJson());

    const { stack } = newStack();
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: isolatedVpc(stack, 'DataVpc', '10.10.0.0/16'), readers: 2 });
    const packages = { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' };
    const proxy = new PgBouncerProxy(stack, 'Pooler', { cluster, packages });
    // WHEN the construct is charted
    new Dashboard(stack, 'Dashboard', { cluster, proxy });
    const template = Template.fromStack(stack);
    const cdkBody = joinIntrinsic(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    cdk = { metrics: chartedMetrics(cdkBody), lines: dashboardLines(cdkBody), alarms: sorted(Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => cdkAlarm(a.Properties as Props))) };
  }, 300_000);
  afterAll(() => {
    module.dispose();
    complete.dispose();
  });

  test('both dashboards chart every catalog metric of the PgBouncer engine and the instances, none of RDS Proxy', () => {
    // No consumer functions given to the module or the construct here: the Lambda section is left out of both.
    const all = metricKeys(METRIC_CATALOG.filter((m) => m.scope === 'instance' || ENGINE_SCOPES.PGBOUNCER.includes(m.scope)));
    expect(tf.metrics).toEqual(all);
    expect(cdk.metrics).toEqual(all);
    expect(cdk.lines.filter((l) => l.includes('ProxyName'))).toEqual([]);
  });

  test('the same dashboard lines', () => {
    expect(tf.lines).toEqual(cdk.lines);
    // Each reader's pools and the writer instance's (the promoted reader's pools pool for it after a failover).
    expect(cdk.lines.filter((l) => l.includes('Listener=READ_ONLY'))).toHaveLength(3 * catalogOf('PGBOUNCER').filter((m) => m.scope === 'pooler-target').length);
  });

  test('the same alarms, the fleet\'s among them, in the module and in the example', () => {
    expect(tf.alarms).toEqual(cdk.alarms);
    // The example charts its two consumers too; the construct here is given none.
    expect(example.filter((a) => a.dimensions !== 'FunctionName')).toEqual(cdk.alarms);
    expect(example.filter((a) => a.dimensions === 'FunctionName').map((a) => a.name).sort()).toEqual(['ReaderErrors', 'ReaderThrottles', 'WriterErrors', 'WriterThrottles']);
    expect(cdk.alarms.map((a) => a.name)).toEqual(expect.arrayContaining(['PoolerReadOnly2ClientsWaiting', 'PoolerReadWriteMaxWait', 'LoadBalancerReadOnlyUnhealthyHosts']));
    // A target group's healthy hosts below the fleet's two, no data counting as none (powered-off or terminated hosts report nothing).
    expect(cdk.alarms.filter((a) => String(a.name).endsWith('MissingHosts'))).toEqual(
      ['LoadBalancerReadOnlyMissingHosts', 'LoadBalancerReadWriteMissingHosts'].map((name) =>
        expect.objectContaining({ name, metric: '2 - healthy', inputs: ['healthy HealthyHostCount Minimum'], threshold: 1, comparison: 'GreaterThanOrEqualToThreshold', treatMissingData: 'breaching' }),
      ),
    );
  });
});
