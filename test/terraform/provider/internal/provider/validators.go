package provider

import (
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The real provider's plan-time validators for the arguments the kit's modules set, ported from
// github.com/hashicorp/terraform-provider-aws (paths below are in that repository). Enum values
// are those of the aws-sdk-go-v2 types the provider's enum.Validate reads, in their order. The
// README says which version of each file and module was read.

// ---- validators the provider defines itself ----

// internal/service/rds/validate.go validIdentifier (DB proxy, endpoint, target group, cluster and
// instance identifiers).
var rdsIdentifier = patternChecks(0, "",
	must(`^[0-9a-z-]+$`, "only lowercase alphanumeric characters and hyphens allowed in %q"),
	must(`^[a-z]`, "first character of %q must be a letter"),
	mustNot(`--`, "%q cannot contain two consecutive hyphens"),
	mustNot(`-$`, "%q cannot end with a hyphen"),
)

// internal/service/rds/validate.go validIdentifierPrefix.
var rdsIdentifierPrefix = patternChecks(0, "",
	must(`^[0-9a-z-]+$`, "only lowercase alphanumeric characters and hyphens allowed in %q"),
	must(`^[a-z]`, "first character of %q must be a letter"),
	mustNot(`--`, "%q cannot contain two consecutive hyphens"),
)

// internal/service/rds/validate.go validParamGroupName.
var rdsParamGroupName = patternChecks(255, "parameter group %q cannot be greater than 255 characters",
	must(`^[0-9a-z.-]+$`, "only lowercase alphanumeric characters, periods, and hyphens allowed in parameter group %q"),
	must(`^[a-z]`, "first character of parameter group %q must be a letter"),
	mustNot(`--`, "parameter group %q cannot contain two consecutive hyphens"),
	mustNot(`-$`, "parameter group %q cannot end with a hyphen"),
)

// internal/service/rds/validate.go validParamGroupNamePrefix (its length message says 226, its
// limit is 255: ported as it is).
var rdsParamGroupNamePrefix = patternChecks(255, "parameter group %q cannot be greater than 226 characters",
	must(`^[0-9a-z-]+$`, "only lowercase alphanumeric characters and hyphens allowed in parameter group %q"),
	must(`^[a-z]`, "first character of parameter group %q must be a letter"),
	mustNot(`--`, "parameter group %q cannot contain two consecutive hyphens"),
)

// internal/service/rds/validate.go validSubnetGroupName.
var rdsSubnetGroupName = allOf(
	patternChecks(255, "%q cannot be longer than 255 characters",
		must(`^[0-9a-z_ .-]+$`, "only lowercase alphanumeric characters, hyphens, underscores, periods, and spaces allowed in %q")),
	stringRule(func(name, s string) []string {
		return errorsIf(regexp.MustCompile(`(?i)^default$`).MatchString(s), "%q is not allowed as %q", "Default", name)
	}),
)

// internal/service/rds/validate.go validSubnetGroupNamePrefix.
var rdsSubnetGroupNamePrefix = patternChecks(229, "%q cannot be longer than 229 characters",
	must(`^[0-9a-z_ .-]+$`, "only lowercase alphanumeric characters, hyphens, underscores, periods, and spaces allowed in %q"))

// internal/service/rds/cluster.go resourceCluster, final_snapshot_identifier's inline ValidateFunc.
var rdsFinalSnapshotIdentifier = patternChecks(0, "",
	must(`^[0-9A-Za-z-]+$`, "only alphanumeric characters and hyphens allowed in %q"),
	mustNot(`--`, "%q cannot contain two consecutive hyphens"),
	mustNot(`-$`, "%q cannot end in a hyphen"),
)

// internal/service/iam/validate.go validResourceName(max): role names (64), role name prefixes
// (64 - 26 = 38, roleNamePrefixMaxLen in role.go), role policy names (128).
func iamResourceName(maxLen int) rule {
	return allOf(stringLenBetween(1, maxLen), stringMatch(regexp.MustCompile(`^[\w+=,.@-]*$`), `must match [\w+=,.@-]`))
}

// internal/service/iam/validate.go validRolePolicyRole: a role name, not an ARN.
var iamRolePolicyRole = allOf(
	stringLenBetween(1, 128),
	stringMatch(regexp.MustCompile(`[\w+=,.@-]+`), ""),
	stringRule(func(name, s string) []string {
		return errorsIf(len(validARN(name, tftypes.NewValue(tftypes.String, s))) == 0, "%q must be the role's name not its ARN", name)
	}),
)

var logGroupNamePattern = regexp.MustCompile(`^[0-9A-Za-z_./#-]+$`)

// internal/service/logs/validate.go validLogGroupName (maxLen 512) and validLogGroupNamePrefix (483).
func logGroupName(maxLen int) rule {
	return stringRule(func(name, s string) []string {
		var errs []string
		if len(s) > maxLen {
			errs = append(errs, fmt.Sprintf("%q cannot be longer than %d characters: %q", name, maxLen, s))
		}
		if !logGroupNamePattern.MatchString(s) {
			errs = append(errs, fmt.Sprintf("%q isn't a valid log group name (alphanumeric characters, underscores,"+
				" hyphens, slashes, hash signs and dots are allowed): %q", name, s))
		}
		return errs
	})
}

// internal/service/lambda/validate.go validLogGroupName (logging_config.log_group).
var lambdaLogGroupName = allOf(
	stringMatch(logGroupNamePattern, "must contain alphanumeric characters, underscores, hyphens, slashes, hash signs and dots only"),
	stringLenBetween(1, 512),
)

// internal/service/lambda/validate.go validFunctionName: a name or ARN, the name at most 64.
var lambdaFunctionName = allOf(
	stringMatch(regexp.MustCompile(`^(arn:[\w-]+:lambda:)?([a-z]{2}-(?:[a-z]+-){1,2}\d{1}:)?(\d{12}:)?(function:)?([0-9A-Za-z_-]+)(:(\$LATEST|[0-9A-Za-z_-]+))?$`),
		"must be valid function name or function ARN"),
	stringLenBetween(1, 140),
	stringRule(func(_, s string) []string {
		fn := s
		if m := regexp.MustCompile(`^arn:[\w-]+:lambda:[a-z]{2}-(?:[a-z]+-){1,2}\d{1}:\d{12}:function:([0-9A-Za-z_-]+)(:(\$LATEST|[0-9A-Za-z_-]+))?$`).FindStringSubmatch(s); m != nil {
			fn = m[1]
		} else if m := regexp.MustCompile(`^\d{12}:function:([0-9A-Za-z_-]+)$`).FindStringSubmatch(s); m != nil {
			fn = m[1]
		}
		return errorsIf(len(fn) > 64, "expected length of the Lambda function name to be less than or equal to 64, got %s (%d characters)", fn, len(fn))
	}),
)

// internal/service/cloudwatch/validate.go validDashboardName.
var cloudwatchDashboardName = stringRule(func(name, s string) []string {
	var errs []string
	if len(s) > 255 {
		errs = append(errs, fmt.Sprintf("%q cannot be longer than 255 characters: %q", name, s))
	}
	const pattern = `^[0-9A-Za-z_-]+$`
	if !regexp.MustCompile(pattern).MatchString(s) {
		errs = append(errs, fmt.Sprintf("%q doesn't comply with restrictions (%q): %q", name, pattern, s))
	}
	return errs
})

// internal/service/cloudwatch/validate.go validEC2AutomateARN.
var cloudwatchEC2AutomateARN = stringRule(func(name, s string) []string {
	const pattern = `^arn:[\w-]+:automate:[\w-]+:ec2:(reboot|recover|stop|terminate)$`
	return errorsIf(!regexp.MustCompile(pattern).MatchString(s), "%q does not match EC2 automation ARN (%q): %q", name, pattern, s)
})

// internal/service/cloudwatch/metric_alarm.go: the namespace and period validators.
var (
	cloudwatchNamespace    = allOf(stringLenBetween(1, 255), stringMatch(regexp.MustCompile(`[^:].*`), "must not contain colon characters"))
	cloudwatchAlarmPeriod  = anyOf(intInSlice(10, 20, 30), intDivisibleBy(60))
	cloudwatchQueryPeriod  = anyOf(intInSlice(1, 5, 10, 20, 30), intDivisibleBy(60))
	cloudwatchStatistic    = oneOf("SampleCount", "Average", "Sum", "Minimum", "Maximum") // types.Statistic
	cloudwatchExtendedStat = stringMatch(
		regexp.MustCompile(`^((p|(tm)|(wm)|(tc)|(ts))((\d{1,2}(\.\d{1,2})?)|(100))|(IQM)|(((TM)|(WM)|(PR)|(TC)|(TS)))\((\d+(\.\d+)?%?)?:(\d+(\.\d+)?%?)?\))$`),
		"invalid statistic, see: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Statistics-definitions.html")
	cloudwatchAction = anyOf(validARN, cloudwatchEC2AutomateARN)
)

// int64validator.Between of terraform-plugin-framework-validators (framework resources).
func frameworkIntBetween(lo, hi int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(n < lo || n > hi, "Attribute %s value must be between %d and %d, got: %d", name, lo, hi, n)
	})
}

// ---- the table ----

const (
	srcRDSCluster         = "internal/service/rds/cluster.go resourceCluster"
	srcRDSClusterInstance = "internal/service/rds/cluster_instance.go resourceClusterInstance"
	srcRDSParamGroup      = "internal/service/rds/cluster_parameter_group.go resourceClusterParameterGroup"
	srcRDSSubnetGroup     = "internal/service/rds/subnet_group.go resourceSubnetGroup"
	srcProxy              = "internal/service/rds/proxy.go resourceProxy"
	srcProxyTargetGroup   = "internal/service/rds/proxy_default_target_group.go resourceProxyDefaultTargetGroup"
	srcProxyTarget        = "internal/service/rds/proxy_target.go resourceProxyTarget"
	srcProxyEndpoint      = "internal/service/rds/proxy_endpoint.go resourceProxyEndpoint"
	srcKMSKey             = "internal/service/kms/key.go resourceKey"
	srcLogGroup           = "internal/service/logs/group.go resourceGroup"
	srcIAMRole            = "internal/service/iam/role.go resourceRole"
	srcIAMRolePolicy      = "internal/service/iam/role_policy.go resourceRolePolicy"
	srcSecurityGroup      = "internal/service/ec2/vpc_security_group.go resourceSecurityGroup"
	srcIngressRule        = "internal/service/ec2/vpc_security_group_ingress_rule.go (shared by the egress rule)"
	srcLambda             = "internal/service/lambda/function.go resourceFunction"
	srcDashboard          = "internal/service/cloudwatch/dashboard.go resourceDashboard"
	srcAlarm              = "internal/service/cloudwatch/metric_alarm.go resourceMetricAlarm"
	srcSNSTopic           = "internal/service/sns/topic.go resourceTopic"
	srcSubnet             = "internal/service/ec2/vpc_subnet.go resourceSubnet"
	srcFlowLog            = "internal/service/ec2/vpc_flow_log.go resourceFlowLog"
	srcVPCEndpoint        = "internal/service/ec2/vpc_endpoint.go resourceVPCEndpoint"
	srcPolicyDocument     = "internal/service/iam/policy_document_data_source.go dataSourcePolicyDocument"
)

// rdsEngines are clusterEngine_Values / clusterInstanceEngine_Values (internal/service/rds/consts.go);
// "custom-" engines pass the first branch of the validation.Any.
var rdsEngine = anyOf(
	stringMatch(regexp.MustCompile(`^custom-.*$`), "must begin with custom-"),
	oneOf("aurora-mysql", "aurora-postgresql", "mysql", "postgres"),
)

var resourceRules = map[string]typeRules{
	"aws_rds_cluster": {
		attributes: []attrRule{
			{"cluster_identifier", rdsIdentifier, srcRDSCluster + " (validIdentifier)", false},
			{"cluster_identifier_prefix", rdsIdentifierPrefix, srcRDSCluster + " (validIdentifierPrefix)", false},
			{"backup_retention_period", intAtMost(35), srcRDSCluster, false},
			{"engine", rdsEngine, srcRDSCluster, false},
			{"enabled_cloudwatch_logs_exports", oneOf("audit", "error", "general", "iam-db-auth-error", "instance", "postgresql", "slowquery", "upgrade"), srcRDSCluster + " (clusterExportableLogType_Values)", false},
			{"final_snapshot_identifier", rdsFinalSnapshotIdentifier, srcRDSCluster, false},
			{"kms_key_id", validARN, srcRDSCluster + " (verify.ValidARN)", false},
			{"master_user_secret_kms_key_id", validKMSKeyID, srcRDSCluster + " (verify.ValidKMSKeyID)", false},
			{"performance_insights_kms_key_id", validARN, srcRDSCluster, false},
			{"monitoring_role_arn", validARN, srcRDSCluster, false},
		},
		config: []configRule{
			conflictsWith("cluster_identifier", "cluster_identifier_prefix", srcRDSCluster),
			conflictsWith("manage_master_user_password", "master_password", srcRDSCluster),
		},
	},
	"aws_rds_cluster_instance": {
		attributes: []attrRule{
			{"identifier", rdsIdentifier, srcRDSClusterInstance + " (validIdentifier)", false},
			{"identifier_prefix", rdsIdentifierPrefix, srcRDSClusterInstance + " (validIdentifierPrefix)", false},
			{"engine", rdsEngine, srcRDSClusterInstance, false},
			{"performance_insights_kms_key_id", validARN, srcRDSClusterInstance, false},
			{"performance_insights_retention_period", anyOf(intInSlice(7, 731), allOf(intAtLeast(7), intAtMost(731), intDivisibleBy(31))), srcRDSClusterInstance, false},
		},
		config: []configRule{conflictsWith("identifier", "identifier_prefix", srcRDSClusterInstance)},
	},
	"aws_rds_cluster_parameter_group": {
		attributes: []attrRule{
			{"name", rdsParamGroupName, srcRDSParamGroup + " (validParamGroupName)", false},
			{"name_prefix", rdsParamGroupNamePrefix, srcRDSParamGroup + " (validParamGroupNamePrefix)", false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcRDSParamGroup)},
	},
	"aws_db_subnet_group": {
		attributes: []attrRule{
			{"name", rdsSubnetGroupName, srcRDSSubnetGroup + " (validSubnetGroupName)", false},
			{"name_prefix", rdsSubnetGroupNamePrefix, srcRDSSubnetGroup + " (validSubnetGroupNamePrefix)", false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcRDSSubnetGroup)},
	},
	"aws_db_proxy": {
		attributes: []attrRule{
			{"name", rdsIdentifier, srcProxy + " (validIdentifier)", false},
			{"engine_family", oneOf("MYSQL", "POSTGRESQL", "SQLSERVER"), srcProxy + " (types.EngineFamily)", false},
			{"role_arn", validARN, srcProxy, false},
			{"auth.auth_scheme", oneOf("SECRETS"), srcProxy + " (types.AuthScheme)", false},
			{"auth.client_password_auth_type", oneOf("MYSQL_NATIVE_PASSWORD", "MYSQL_CACHING_SHA2_PASSWORD", "POSTGRES_SCRAM_SHA_256", "POSTGRES_MD5", "SQL_SERVER_AUTHENTICATION"), srcProxy + " (types.ClientPasswordAuthType)", false},
			{"auth.iam_auth", oneOf("DISABLED", "REQUIRED", "ENABLED"), srcProxy + " (types.IAMAuthMode)", false},
			{"auth.secret_arn", validARN, srcProxy, false},
		},
	},
	"aws_db_proxy_default_target_group": {
		attributes: []attrRule{
			{"db_proxy_name", rdsIdentifier, srcProxyTargetGroup + " (validIdentifier)", false},
			{"connection_pool_config.connection_borrow_timeout", intBetween(0, 3600), srcProxyTargetGroup, false},
			{"connection_pool_config.max_connections_percent", intBetween(1, 100), srcProxyTargetGroup, false},
			{"connection_pool_config.max_idle_connections_percent", intBetween(0, 100), srcProxyTargetGroup, false},
			{"connection_pool_config.session_pinning_filters", oneOf("EXCLUDE_VARIABLE_SETS"), srcProxyTargetGroup, false},
		},
	},
	"aws_db_proxy_target": {
		attributes: []attrRule{
			{"db_proxy_name", rdsIdentifier, srcProxyTarget + " (validIdentifier)", false},
			{"target_group_name", rdsIdentifier, srcProxyTarget + " (validIdentifier)", false},
			{"db_cluster_identifier", rdsIdentifier, srcProxyTarget + " (validIdentifier)", false},
			{"db_instance_identifier", rdsIdentifier, srcProxyTarget + " (validIdentifier)", false},
		},
		config: []configRule{exactlyOneOf(srcProxyTarget, "db_cluster_identifier", "db_instance_identifier")},
	},
	"aws_db_proxy_endpoint": {
		attributes: []attrRule{
			{"db_proxy_endpoint_name", rdsIdentifier, srcProxyEndpoint + " (validIdentifier)", false},
			{"db_proxy_name", rdsIdentifier, srcProxyEndpoint + " (validIdentifier)", false},
			{"target_role", oneOf("READ_WRITE", "READ_ONLY"), srcProxyEndpoint + " (types.DBProxyEndpointTargetRole)", false},
		},
	},
	"aws_kms_key": {
		attributes: []attrRule{
			{"description", stringLenBetween(0, 8192), srcKMSKey, false},
			{"policy", stringIsJSON, srcKMSKey + " (sdkv2.IAMPolicyDocumentSchemaOptionalComputed)", false},
		},
	},
	"aws_cloudwatch_log_group": {
		attributes: []attrRule{
			{"name", logGroupName(512), srcLogGroup + " (validLogGroupName, internal/service/logs/validate.go)", false},
			{"name_prefix", logGroupName(483), srcLogGroup + " (validLogGroupNamePrefix, internal/service/logs/validate.go)", false},
			{"retention_in_days", intInSlice(0, 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653), srcLogGroup, false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcLogGroup)},
	},
	"aws_iam_role": {
		attributes: []attrRule{
			{"name", iamResourceName(64), srcIAMRole + " (validResourceName(roleNameMaxLen))", false},
			{"name_prefix", iamResourceName(38), srcIAMRole + " (validResourceName(roleNamePrefixMaxLen))", false},
			{"assume_role_policy", validIAMPolicyJSON(0), srcIAMRole + " (verify.ValidIAMPolicyJSON)", false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcIAMRole)},
	},
	"aws_iam_role_policy": {
		attributes: []attrRule{
			{"name", iamResourceName(128), srcIAMRolePolicy + " (validRolePolicyName)", false},
			{"name_prefix", iamResourceName(102), srcIAMRolePolicy + " (validResourceName(rolePolicyNamePrefixMaxLen))", false},
			{"policy", validIAMPolicyJSON(10240), srcIAMRolePolicy + " (verify.ValidIAMPolicyJSON)", false},
			{"role", iamRolePolicyRole, srcIAMRolePolicy + " (validRolePolicyRole)", false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcIAMRolePolicy)},
	},
	"aws_security_group": {
		attributes: []attrRule{
			{"description", stringLenBetween(0, 255), srcSecurityGroup, false},
			{"name", allOf(stringLenBetween(0, 255), stringDoesNotMatch(regexp.MustCompile(`^sg-`), "cannot begin with sg-")), srcSecurityGroup, false},
			{"name_prefix", allOf(stringLenBetween(0, 229), stringDoesNotMatch(regexp.MustCompile(`^sg-`), "cannot begin with sg-")), srcSecurityGroup, false},
		},
		config: []configRule{conflictsWith("name", "name_prefix", srcSecurityGroup)},
	},
	"aws_vpc_security_group_ingress_rule": securityGroupRuleRules,
	"aws_vpc_security_group_egress_rule":  securityGroupRuleRules,
	"aws_lambda_function": {
		attributes: []attrRule{
			{"function_name", lambdaFunctionName, srcLambda + " (validFunctionName, internal/service/lambda/validate.go)", false},
			{"handler", stringLenBetween(1, 128), srcLambda, false},
			{"runtime", oneOf(lambdaRuntimes...), srcLambda + " (types.Runtime)", false},
			{"architectures", oneOf("x86_64", "arm64"), srcLambda + " (types.Architecture)", false},
			{"memory_size", intBetween(128, 10240), srcLambda, false},
			{"timeout", intBetween(1, 900), srcLambda, false},
			{"reserved_concurrent_executions", intAtLeast(-1), srcLambda, false},
			{"role", validARN, srcLambda, false},
			{"kms_key_arn", validARN, srcLambda, false},
			{"tracing_config.mode", oneOf("Active", "PassThrough"), srcLambda + " (types.TracingMode)", false},
			{"logging_config.log_format", oneOf("JSON", "Text"), srcLambda + " (types.LogFormat)", false},
			{"logging_config.log_group", lambdaLogGroupName, srcLambda + " (validLogGroupName, internal/service/lambda/validate.go)", false},
		},
		config: []configRule{
			maxItems("architectures", 1, srcLambda),
			exactlyOneOf(srcLambda, "filename", "image_uri", "s3_bucket"),
		},
	},
	"aws_cloudwatch_dashboard": {
		attributes: []attrRule{
			{"dashboard_name", cloudwatchDashboardName, srcDashboard + " (validDashboardName, internal/service/cloudwatch/validate.go)", false},
			{"dashboard_body", stringIsJSON, srcDashboard, false},
		},
	},
	"aws_cloudwatch_metric_alarm": {
		attributes: []attrRule{
			{"alarm_name", stringLenBetween(1, 255), srcAlarm, false},
			{"alarm_description", stringLenBetween(0, 1024), srcAlarm, false},
			{"alarm_actions", cloudwatchAction, srcAlarm, false},
			{"ok_actions", cloudwatchAction, srcAlarm, false},
			{"comparison_operator", oneOf("GreaterThanOrEqualToThreshold", "GreaterThanThreshold", "LessThanThreshold", "LessThanOrEqualToThreshold",
				"LessThanLowerOrGreaterThanUpperThreshold", "LessThanLowerThreshold", "GreaterThanUpperThreshold"), srcAlarm + " (types.ComparisonOperator)", false},
			{"datapoints_to_alarm", intAtLeast(1), srcAlarm, false},
			{"evaluation_periods", intAtLeast(1), srcAlarm, false},
			{"metric_name", stringLenBetween(1, 255), srcAlarm, false},
			{"namespace", cloudwatchNamespace, srcAlarm, false},
			{"period", cloudwatchAlarmPeriod, srcAlarm, false},
			{"statistic", cloudwatchStatistic, srcAlarm + " (types.Statistic)", false},
			{"treat_missing_data", oneOfFold("breaching", "ignore", "missing", "notBreaching"), srcAlarm + " (missingData_Values)", false},
			{"metric_query.id", stringLenBetween(1, 255), srcAlarm, false},
			{"metric_query.expression", stringLenBetween(1, 1024), srcAlarm, false},
			{"metric_query.period", cloudwatchQueryPeriod, srcAlarm, false},
			{"metric_query.metric.metric_name", stringLenBetween(1, 255), srcAlarm, false},
			{"metric_query.metric.namespace", cloudwatchNamespace, srcAlarm, false},
			{"metric_query.metric.period", cloudwatchQueryPeriod, srcAlarm, false},
			{"metric_query.metric.stat", anyOf(cloudwatchStatistic, cloudwatchExtendedStat), srcAlarm, false},
		},
		config: []configRule{
			maxItems("ok_actions", 5, srcAlarm),
			conflictsWith("dimensions", "metric_query", srcAlarm),
			conflictsWith("metric_name", "metric_query", srcAlarm),
			conflictsWith("namespace", "metric_query", srcAlarm),
			conflictsWith("period", "metric_query", srcAlarm),
			conflictsWith("statistic", "metric_query", srcAlarm),
			conflictsWith("statistic", "extended_statistic", srcAlarm),
			conflictsWith("threshold", "threshold_metric_id", srcAlarm),
		},
		plan: []configRule{{metricAlarmStatistic, srcAlarm + " CustomizeDiff"}},
	},
	"aws_sns_topic": {
		config: []configRule{conflictsWith("name", "name_prefix", srcSNSTopic)},
		plan:   []configRule{{snsTopicName, srcSNSTopic + " resourceTopicCustomizeDiff"}},
	},
	"aws_vpc": {
		attributes: []attrRule{{"cidr_block", validIPv4CIDR, "internal/service/ec2/vpc_.go resourceVPC (verify.ValidIPv4CIDRNetworkAddress)", false}},
	},
	"aws_subnet": {
		attributes: []attrRule{{"cidr_block", validIPv4CIDR, srcSubnet + " (verify.ValidIPv4CIDRNetworkAddress)", false}},
		config:     []configRule{conflictsWith("availability_zone", "availability_zone_id", srcSubnet)},
	},
	"aws_flow_log": {
		attributes: []attrRule{
			{"traffic_type", oneOf("ACCEPT", "REJECT", "ALL"), srcFlowLog + " (types.TrafficType)", false},
			{"log_destination", validARN, srcFlowLog, false},
			{"iam_role_arn", validARN, srcFlowLog, false},
		},
		config: []configRule{exactlyOneOf(srcFlowLog, "eni_id", "regional_nat_gateway_id", "subnet_id", "vpc_id", "transit_gateway_id", "transit_gateway_attachment_id")},
	},
	"aws_vpc_endpoint": {
		attributes: []attrRule{
			{"vpc_endpoint_type", oneOf("Interface", "Gateway", "GatewayLoadBalancer", "Resource", "ServiceNetwork", "Tunnel"), srcVPCEndpoint + " (types.VpcEndpointType)", false},
		},
	},
}

var securityGroupRuleRules = typeRules{
	attributes: []attrRule{
		{"from_port", frameworkIntBetween(-1, 65535), srcIngressRule + " (int64validator.Between)", true},
		{"to_port", frameworkIntBetween(-1, 65535), srcIngressRule + " (int64validator.Between)", true},
	},
	config: []configRule{exactlyOneOfFramework(srcIngressRule+" ConfigValidators", "cidr_ipv4", "cidr_ipv6", "prefix_list_id", "referenced_security_group_id")},
}

var dataSourceRules = map[string]typeRules{
	"aws_iam_policy_document": {
		attributes: []attrRule{
			{"statement.effect", oneOf("Allow", "Deny"), srcPolicyDocument, false},
			{"statement.sid", stringMatch(regexp.MustCompile(`^[a-zA-Z0-9]*$`), "must only include alphanumeric characters"), srcPolicyDocument, false},
			{"version", oneOf("2008-10-17", "2012-10-17"), srcPolicyDocument, false},
			{"source_policy_documents", stringIsJSON, srcPolicyDocument, false},
			{"override_policy_documents", stringIsJSON, srcPolicyDocument, false},
		},
	},
}

// lambdaRuntimes are the values of aws-sdk-go-v2 service/lambda types.Runtime, in its order (the
// order of the provider's "expected runtime to be one of [...]" message).
var lambdaRuntimes = []string{
	"nodejs", "nodejs4.3", "nodejs6.10", "nodejs8.10", "nodejs10.x", "nodejs12.x", "nodejs14.x", "nodejs16.x",
	"nodejs18.x", "nodejs20.x", "nodejs22.x", "nodejs24.x", "java8", "java8.al2", "java11", "java17", "java21",
	"java25", "python2.7", "python3.6", "python3.7", "python3.8", "python3.9", "python3.10", "python3.11",
	"python3.12", "python3.13", "python3.14", "dotnetcore1.0", "dotnetcore2.0", "dotnetcore2.1", "dotnetcore3.1",
	"dotnet6", "dotnet8", "dotnet10", "nodejs4.3-edge", "go1.x", "ruby2.5", "ruby2.7", "ruby3.2", "ruby3.3",
	"ruby3.4", "ruby4.0", "provided", "provided.al2", "provided.al2023", "nodejs26.x", "python3.15",
	"java8.al2023", "java11.al2023", "java17.al2023",
}

// metricAlarmStatistic is the metric alarm's CustomizeDiff: a single-metric alarm needs exactly
// one of statistic and extended_statistic; a metric_query has an expression or a metric, not both.
func metricAlarmStatistic(cfg tftypes.Value) []*tfprotov5.Diagnostic {
	metric, metricUnknown := presence(cfg, "metric_name")
	stat, statUnknown := presence(cfg, "statistic")
	extended, extendedUnknown := presence(cfg, "extended_statistic")
	if metric && !statUnknown && !extendedUnknown && !metricUnknown && stat == extended {
		return []*tfprotov5.Diagnostic{errorAt(nil, "One of `statistic` or `extended_statistic` must be set for a cloudwatch metric alarm", "")}
	}
	queries, _ := attribute(cfg, "metric_query")
	var elems []tftypes.Value
	if queries.IsNull() || !queries.IsKnown() || queries.As(&elems) != nil {
		return nil
	}
	for _, q := range elems {
		expression, _ := presence(q, "expression")
		m, ok := attribute(q, "metric")
		var metrics []tftypes.Value
		if expression && ok && m.IsKnown() && !m.IsNull() && m.As(&metrics) == nil && len(metrics) > 0 {
			return []*tfprotov5.Diagnostic{errorAt(nil, "No metric_query may have both `expression` and a `metric` specified", "")}
		}
	}
	return nil
}

// snsTopicName is resourceTopicCustomizeDiff's check of the name on create (a configured name;
// name_prefix and generated names end in digits and always pass).
func snsTopicName(cfg tftypes.Value) []*tfprotov5.Diagnostic {
	name := configString(cfg, "name")
	if name == "" {
		return nil
	}
	pattern := regexp.MustCompile(`^[0-9A-Za-z_-]{1,256}$`)
	if fifo, ok := attribute(cfg, "fifo_topic"); ok && fifo.IsKnown() && !fifo.IsNull() {
		var b bool
		if fifo.As(&b) == nil && b {
			pattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,251}\.fifo$`)
		}
	}
	if pattern.MatchString(name) {
		return nil
	}
	return []*tfprotov5.Diagnostic{errorAt(nil, "invalid topic name: "+name, "")}
}
