package provider

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/aurora-proxy-kit/aurora-proxy-kit/test/terraform/provider/schema"
)

func testServer(t *testing.T) *Server {
	t.Helper()
	s, err := LoadSchemas(schema.JSON)
	if err != nil {
		t.Fatal(err)
	}
	return New(s)
}

// leafValue is a value of type t from a Go string, int, bool or tftypes.Value; a collection type
// gets a one-element collection.
func leafValue(t tftypes.Type, x any) tftypes.Value {
	if v, ok := x.(tftypes.Value); ok {
		return v
	}
	switch tt := t.(type) {
	case tftypes.List:
		return tftypes.NewValue(t, []tftypes.Value{leafValue(tt.ElementType, x)})
	case tftypes.Set:
		return tftypes.NewValue(t, []tftypes.Value{leafValue(tt.ElementType, x)})
	}
	if n, ok := x.(int); ok {
		return tftypes.NewValue(t, big.NewFloat(float64(n)))
	}
	return tftypes.NewValue(t, x)
}

// withValue sets a dotted path of obj (a value of block b) to x, creating one block on the way.
func withValue(t *testing.T, b *Block, obj tftypes.Value, path string, x any) tftypes.Value {
	t.Helper()
	var m map[string]tftypes.Value
	if err := obj.As(&m); err != nil {
		t.Fatal(err)
	}
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		a, ok := b.Attributes[head]
		if !ok {
			t.Fatalf("no attribute %s", head)
		}
		m[head] = leafValue(a.Type, x)
		return tftypes.NewValue(obj.Type(), m)
	}
	bt, ok := b.BlockTypes[head]
	if !ok {
		t.Fatalf("no block %s", head)
	}
	cur := m[head]
	if _, single := cur.Type().(tftypes.Object); single {
		if cur.IsNull() {
			cur = emptyState(bt.Block, nil)
		}
		m[head] = withValue(t, bt.Block, cur, rest, x)
		return tftypes.NewValue(obj.Type(), m)
	}
	var elems []tftypes.Value
	if !cur.IsNull() {
		_ = cur.As(&elems)
	}
	if len(elems) == 0 {
		elems = []tftypes.Value{emptyState(bt.Block, nil)}
	}
	elems[0] = withValue(t, bt.Block, elems[0], rest, x)
	m[head] = tftypes.NewValue(cur.Type(), elems)
	return tftypes.NewValue(obj.Type(), m)
}

// validate runs ValidateResourceTypeConfig (or ValidateDataSourceConfig for "data.<type>") on a
// configuration with the given attributes set, and returns the diagnostics as text.
func validate(t *testing.T, srv *Server, typeName string, attrs map[string]any) string {
	t.Helper()
	dataName, isData := strings.CutPrefix(typeName, "data.")
	sch := srv.schemas.Resources[typeName]
	if isData {
		sch = srv.schemas.DataSources[dataName]
	}
	if sch == nil {
		t.Fatalf("no schema for %s", typeName)
	}
	cfg := emptyState(sch.Block, nil)
	for path, x := range attrs {
		cfg = withValue(t, sch.Block, cfg, path, x)
	}
	dv, err := tfprotov5.NewDynamicValue(sch.ValueType(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var diags []*tfprotov5.Diagnostic
	if isData {
		resp, _ := srv.ValidateDataSourceConfig(context.Background(), &tfprotov5.ValidateDataSourceConfigRequest{TypeName: dataName, Config: &dv})
		diags = resp.Diagnostics
	} else {
		resp, _ := srv.ValidateResourceTypeConfig(context.Background(), &tfprotov5.ValidateResourceTypeConfigRequest{TypeName: typeName, Config: &dv})
		diags = resp.Diagnostics
	}
	var out []string
	for _, d := range diags {
		out = append(out, fmt.Sprintf("%s: %s %s", d.Attribute, d.Summary, d.Detail))
	}
	return strings.Join(out, "\n")
}

const arn = "arn:aws:iam::123456789012:role/r"

// One case per attribute validator of the table: a value the real provider accepts and one it
// rejects, with a piece of its message.
var attributeCases = []struct {
	typeName, path string
	valid, invalid any
	message        string
}{
	{"aws_rds_cluster", "cluster_identifier", "aurora-1", "Aurora--1-", `only lowercase alphanumeric characters and hyphens allowed in "cluster_identifier"`},
	{"aws_rds_cluster", "cluster_identifier_prefix", "aurora-", "1aurora", `first character of "cluster_identifier_prefix" must be a letter`},
	{"aws_rds_cluster", "backup_retention_period", 35, 36, "expected backup_retention_period to be at most (35), got 36"},
	{"aws_rds_cluster", "engine", "aurora-postgresql", "aurora-postgres", `expected engine to be one of ["aurora-mysql" "aurora-postgresql" "mysql" "postgres"], got aurora-postgres`},
	{"aws_rds_cluster", "enabled_cloudwatch_logs_exports", "postgresql", "postgres", "expected enabled_cloudwatch_logs_exports to be one of"},
	{"aws_rds_cluster", "enabled_cloudwatch_logs_exports", "upgrade", "upgrades", `"slowquery" "upgrade"], got upgrades`},
	{"aws_rds_cluster", "final_snapshot_identifier", "db-final", "db_final-", `only alphanumeric characters and hyphens allowed in "final_snapshot_identifier"`},
	{"aws_rds_cluster", "kms_key_id", "arn:aws:kms:us-east-1:123456789012:key/k", "alias/k", `"kms_key_id" (alias/k) is an invalid ARN: arn: invalid prefix`},
	{"aws_rds_cluster", "master_user_secret_kms_key_id", "alias/k", "", `"master_user_secret_kms_key_id" cannot be shorter than 1 character`},
	{"aws_rds_cluster", "performance_insights_kms_key_id", arn, "arn:aws:kms", "is an invalid ARN: arn: not enough sections"},
	{"aws_rds_cluster", "monitoring_role_arn", arn, "arn:aws:iam:useast1:123456789012:role/r", "invalid region value"},
	{"aws_rds_cluster_instance", "identifier", "db-writer", "db-writer-", `"identifier" cannot end with a hyphen`},
	{"aws_rds_cluster_instance", "identifier_prefix", "db-", "db--", `"identifier_prefix" cannot contain two consecutive hyphens`},
	{"aws_rds_cluster_instance", "engine", "custom-oracle-ee", "oracle", "invalid value for engine (must begin with custom-)"},
	{"aws_rds_cluster_instance", "performance_insights_kms_key_id", arn, "key", "is an invalid ARN"},
	{"aws_rds_cluster_instance", "performance_insights_retention_period", 93, 30, "expected performance_insights_retention_period to be divisible by 31"},
	{"aws_rds_cluster_parameter_group", "name", "pg.v1", "pg-", `parameter group "name" cannot end with a hyphen`},
	{"aws_rds_cluster_parameter_group", "name_prefix", "pg-", "PG-", `only lowercase alphanumeric characters and hyphens allowed in parameter group "name_prefix"`},
	{"aws_db_subnet_group", "name", "my subnets_1", "default", `"Default" is not allowed as "name"`},
	{"aws_db_subnet_group", "name_prefix", "main-", "Main-", `only lowercase alphanumeric characters, hyphens, underscores, periods, and spaces allowed in "name_prefix"`},
	{"aws_db_proxy", "name", "proxy-1", "Proxy", `only lowercase alphanumeric characters and hyphens allowed in "name"`},
	{"aws_db_proxy", "engine_family", "POSTGRESQL", "postgresql", `expected engine_family to be one of ["MYSQL" "POSTGRESQL" "SQLSERVER"], got postgresql`},
	{"aws_db_proxy", "role_arn", arn, "role/r", "is an invalid ARN"},
	{"aws_db_proxy", "auth.auth_scheme", "SECRETS", "IAM", "expected auth_scheme to be one of"},
	{"aws_db_proxy", "auth.client_password_auth_type", "POSTGRES_SCRAM_SHA_256", "SCRAM", "expected client_password_auth_type to be one of"},
	{"aws_db_proxy", "auth.iam_auth", "REQUIRED", "required", `expected iam_auth to be one of ["DISABLED" "REQUIRED" "ENABLED"], got required`},
	{"aws_db_proxy", "auth.secret_arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:s", "s", `"secret_arn" (s) is an invalid ARN`},
	{"aws_db_proxy_default_target_group", "db_proxy_name", "proxy", "proxy_1", `only lowercase alphanumeric characters and hyphens allowed in "db_proxy_name"`},
	{"aws_db_proxy_default_target_group", "connection_pool_config.connection_borrow_timeout", 3600, 3601, "expected connection_borrow_timeout to be in the range (0 - 3600), got 3601"},
	{"aws_db_proxy_default_target_group", "connection_pool_config.max_connections_percent", 1, 0, "expected max_connections_percent to be in the range (1 - 100), got 0"},
	{"aws_db_proxy_default_target_group", "connection_pool_config.max_idle_connections_percent", 0, 101, "expected max_idle_connections_percent to be in the range (0 - 100), got 101"},
	{"aws_db_proxy_default_target_group", "connection_pool_config.session_pinning_filters", "EXCLUDE_VARIABLE_SETS", "EXCLUDE_ALL", "expected session_pinning_filters to be one of"},
	{"aws_db_proxy_target", "db_proxy_name", "proxy", "-proxy", `first character of "db_proxy_name" must be a letter`},
	{"aws_db_proxy_target", "target_group_name", "default", "Default", `only lowercase alphanumeric characters and hyphens allowed in "target_group_name"`},
	{"aws_db_proxy_target", "db_cluster_identifier", "aurora", "aurora-", `"db_cluster_identifier" cannot end with a hyphen`},
	{"aws_db_proxy_target", "db_instance_identifier", "db-1", "db--1", `"db_instance_identifier" cannot contain two consecutive hyphens`},
	{"aws_db_proxy_endpoint", "db_proxy_endpoint_name", "app-ro", "app_ro", `only lowercase alphanumeric characters and hyphens allowed in "db_proxy_endpoint_name"`},
	{"aws_db_proxy_endpoint", "db_proxy_name", "proxy", "2proxy", `first character of "db_proxy_name" must be a letter`},
	{"aws_db_proxy_endpoint", "target_role", "READ_ONLY", "READ", `expected target_role to be one of ["READ_WRITE" "READ_ONLY"], got READ`},
	{"aws_kms_key", "description", "key", strings.Repeat("k", 8193), "expected length of description to be in the range (0 - 8192)"},
	{"aws_kms_key", "policy", `{"Version":"2012-10-17"}`, `{"Version":`, `"policy" contains an invalid JSON`},
	{"aws_cloudwatch_log_group", "name", "/aws/rds/cluster/db/postgresql", "/aws/lambda/fn:1", `"name" isn't a valid log group name`},
	{"aws_cloudwatch_log_group", "name_prefix", "/flow-", strings.Repeat("a", 484), `"name_prefix" cannot be longer than 483 characters`},
	{"aws_cloudwatch_log_group", "retention_in_days", 30, 31, "expected retention_in_days to be one of"},
	{"aws_iam_role", "name", "proxy-role", strings.Repeat("r", 65), "expected length of name to be in the range (1 - 64)"},
	{"aws_iam_role", "name_prefix", strings.Repeat("p", 38), strings.Repeat("p", 39), "expected length of name_prefix to be in the range (1 - 38)"},
	{"aws_iam_role", "assume_role_policy", `{}`, `not json`, `"assume_role_policy" contains an invalid JSON`},
	{"aws_iam_role", "assume_role_policy", `{"Version":"2012-10-17","Statement":[]}`, `[]`, `"assume_role_policy" contains an invalid JSON policy: contains a JSON array, not a JSON object`},
	{"aws_iam_role_policy", "name", "read-secret", "read secret", `invalid value for name (must match [\w+=,.@-])`},
	{"aws_iam_role_policy", "name_prefix", "read-", strings.Repeat("p", 103), "expected length of name_prefix to be in the range (1 - 102)"},
	{"aws_iam_role_policy", "policy", `{"Version":"2012-10-17"}`, ` {"Version":"2012-10-17"}`, "leading space characters are not allowed"},
	{"aws_iam_role_policy", "role", "proxy-role", arn, `"role" must be the role's name not its ARN`},
	{"aws_security_group", "description", "proxy", strings.Repeat("d", 256), "expected length of description to be in the range (0 - 255)"},
	{"aws_security_group", "name", "proxy", "sg-proxy", "invalid value for name (cannot begin with sg-)"},
	{"aws_security_group", "name_prefix", "proxy-", "sg-proxy-", "invalid value for name_prefix (cannot begin with sg-)"},
	{"aws_vpc_security_group_ingress_rule", "from_port", 5432, 70000, "Invalid Attribute Value Attribute from_port value must be between -1 and 65535, got: 70000"},
	{"aws_vpc_security_group_ingress_rule", "to_port", -1, -2, "Attribute to_port value must be between -1 and 65535, got: -2"},
	{"aws_vpc_security_group_egress_rule", "from_port", 443, 65536, "Attribute from_port value must be between -1 and 65535"},
	{"aws_vpc_security_group_egress_rule", "to_port", 443, 65536, "Attribute to_port value must be between -1 and 65535"},
	{"aws_lambda_function", "function_name", "app-reader", strings.Repeat("f", 65), "expected length of the Lambda function name to be less than or equal to 64"},
	{"aws_lambda_function", "handler", "index.handler", "", "expected length of handler to be in the range (1 - 128)"},
	{"aws_lambda_function", "runtime", "nodejs24.x", "nodejs24", "expected runtime to be one of"},
	{"aws_lambda_function", "runtime", "nodejs26.x", "nodejs26", `"java17.al2023"], got nodejs26`},
	{"aws_lambda_function", "architectures", "arm64", "aarch64", `expected architectures to be one of ["x86_64" "arm64"], got aarch64`},
	{"aws_lambda_function", "memory_size", 10240, 64, "expected memory_size to be in the range (128 - 10240), got 64"},
	{"aws_lambda_function", "timeout", 900, 901, "expected timeout to be in the range (1 - 900), got 901"},
	{"aws_lambda_function", "reserved_concurrent_executions", -1, -2, "expected reserved_concurrent_executions to be at least (-1), got -2"},
	{"aws_lambda_function", "role", arn, "lambda-role", `"role" (lambda-role) is an invalid ARN`},
	{"aws_lambda_function", "kms_key_arn", "arn:aws:kms:us-east-1:123456789012:key/k", "k", `"kms_key_arn" (k) is an invalid ARN`},
	{"aws_lambda_function", "tracing_config.mode", "Active", "active", `expected mode to be one of ["Active" "PassThrough"], got active`},
	{"aws_lambda_function", "logging_config.log_format", "Text", "TEXT", `expected log_format to be one of ["JSON" "Text"], got TEXT`},
	{"aws_lambda_function", "logging_config.log_group", "/aws/lambda/app", "/aws/lambda/app:1", "invalid value for log_group (must contain alphanumeric characters"},
	{"aws_cloudwatch_dashboard", "dashboard_name", "aurora-proxy_kit", "aurora proxy", `"dashboard_name" doesn't comply with restrictions`},
	{"aws_cloudwatch_dashboard", "dashboard_body", `{"widgets":[]}`, `{"widgets":`, `"dashboard_body" contains an invalid JSON`},
	{"aws_cloudwatch_metric_alarm", "alarm_name", "db-WriterCpu", strings.Repeat("a", 256), "expected length of alarm_name to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "alarm_description", "cpu", strings.Repeat("d", 1025), "expected length of alarm_description to be in the range (0 - 1024)"},
	{"aws_cloudwatch_metric_alarm", "alarm_actions", "arn:aws:sns:us-east-1:123456789012:alarms", "alarms", "does not match EC2 automation ARN"},
	{"aws_cloudwatch_metric_alarm", "ok_actions", "arn:aws:automate:us-east-1:ec2:reboot", "sns:alarms", `"ok_actions" (sns:alarms) is an invalid ARN`},
	{"aws_cloudwatch_metric_alarm", "comparison_operator", "GreaterThanOrEqualToThreshold", ">=", "expected comparison_operator to be one of"},
	{"aws_cloudwatch_metric_alarm", "datapoints_to_alarm", 1, 0, "expected datapoints_to_alarm to be at least (1), got 0"},
	{"aws_cloudwatch_metric_alarm", "evaluation_periods", 5, 0, "expected evaluation_periods to be at least (1), got 0"},
	{"aws_cloudwatch_metric_alarm", "metric_name", "CPUUtilization", "", "expected length of metric_name to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "namespace", "AWS/RDS", "", "expected length of namespace to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "period", 60, 45, "expected period to be divisible by 60, got: 45"},
	{"aws_cloudwatch_metric_alarm", "statistic", "Average", "Avg", `expected statistic to be one of ["SampleCount" "Average" "Sum" "Minimum" "Maximum"], got Avg`},
	{"aws_cloudwatch_metric_alarm", "treat_missing_data", "NotBreaching", "notbreach", `expected treat_missing_data to be one of ["breaching" "ignore" "missing" "notBreaching"], got notbreach`},
	{"aws_cloudwatch_metric_alarm", "metric_query.id", "utilization", "", "expected length of id to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "metric_query.expression", "100 * a / b", "", "expected length of expression to be in the range (1 - 1024)"},
	{"aws_cloudwatch_metric_alarm", "metric_query.period", 5, 7, "expected period to be one of [1 5 10 20 30], got 7"},
	{"aws_cloudwatch_metric_alarm", "metric_query.metric.metric_name", "DatabaseConnections", "", "expected length of metric_name to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "metric_query.metric.namespace", "AWS/RDS", strings.Repeat("n", 256), "expected length of namespace to be in the range (1 - 255)"},
	{"aws_cloudwatch_metric_alarm", "metric_query.metric.period", 120, 90, "expected period to be divisible by 60, got: 90"},
	{"aws_cloudwatch_metric_alarm", "metric_query.metric.stat", "p99", "Avg", "invalid value for stat (invalid statistic"},
	{"aws_vpc", "cidr_block", "10.0.0.0/16", "10.0.0.1/16", `"10.0.0.1/16" is not a valid IPv4 CIDR block; did you mean "10.0.0.0/16"?`},
	{"aws_subnet", "cidr_block", "10.0.4.0/22", "10.0.4.0/33", `"10.0.4.0/33" is not a valid CIDR block`},
	{"aws_flow_log", "traffic_type", "ALL", "all", `expected traffic_type to be one of ["ACCEPT" "REJECT" "ALL"], got all`},
	{"aws_flow_log", "log_destination", "arn:aws:logs:us-east-1:123456789012:log-group:flow", "flow", "is an invalid ARN"},
	{"aws_flow_log", "iam_role_arn", arn, "flow-role", "is an invalid ARN"},
	{"aws_vpc_endpoint", "vpc_endpoint_type", "Interface", "interface", "expected vpc_endpoint_type to be one of"},
	{"aws_vpc_endpoint", "vpc_endpoint_type", "Tunnel", "tunnel", `"ServiceNetwork" "Tunnel"], got tunnel`},
	{"data.aws_iam_policy_document", "statement.effect", "Deny", "deny", `expected effect to be one of ["Allow" "Deny"], got deny`},
	{"data.aws_iam_policy_document", "statement.sid", "ReadTheSecret", "Read-the-secret", "invalid value for sid (must only include alphanumeric characters)"},
	{"data.aws_iam_policy_document", "version", "2012-10-17", "2012-10-18", "expected version to be one of"},
	{"data.aws_iam_policy_document", "source_policy_documents", `{}`, `{`, `"source_policy_documents" contains an invalid JSON`},
	{"data.aws_iam_policy_document", "override_policy_documents", `{}`, `}`, `"override_policy_documents" contains an invalid JSON`},
}

// requiredForCase fills what the type's own config rules need, so a case sees only its own error.
var requiredForCase = map[string]map[string]any{
	"aws_db_proxy_target":                 {"db_cluster_identifier": "aurora"},
	"aws_lambda_function":                 {"filename": "app.zip"},
	"aws_flow_log":                        {"vpc_id": "vpc-1"},
	"aws_vpc_security_group_ingress_rule": {"referenced_security_group_id": "sg-1"},
	"aws_vpc_security_group_egress_rule":  {"referenced_security_group_id": "sg-1"},
}

func caseConfig(typeName, path string, x any) map[string]any {
	attrs := map[string]any{}
	for k, v := range requiredForCase[typeName] {
		attrs[k] = v
	}
	if path == "db_instance_identifier" {
		delete(attrs, "db_cluster_identifier")
	}
	attrs[path] = x
	return attrs
}

func TestAttributeValidators(t *testing.T) {
	srv := testServer(t)
	for _, c := range attributeCases {
		t.Run(c.typeName+"/"+c.path, func(t *testing.T) {
			if got := validate(t, srv, c.typeName, caseConfig(c.typeName, c.path, c.valid)); got != "" {
				t.Errorf("valid %v rejected:\n%s", c.valid, got)
			}
			got := validate(t, srv, c.typeName, caseConfig(c.typeName, c.path, c.invalid))
			if !strings.Contains(got, c.message) {
				t.Errorf("invalid %v: want a diagnostic containing\n  %s\ngot\n  %s", c.invalid, c.message, got)
			}
			// The error points at the attribute.
			if leaf := c.path[strings.LastIndex(c.path, ".")+1:]; !strings.Contains(got, `"`+leaf+`"`) && !strings.Contains(got, leaf) {
				t.Errorf("diagnostic does not name %s: %s", leaf, got)
			}
		})
	}
}

// Every attribute rule of the table has a case above.
func TestEveryAttributeValidatorHasACase(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range attributeCases {
		covered[c.typeName+" "+c.path] = true
	}
	check := func(prefix string, table map[string]typeRules) {
		for typeName, rules := range table {
			for _, r := range rules.attributes {
				if !covered[prefix+typeName+" "+r.path] {
					t.Errorf("no test case for %s%s %s (%s)", prefix, typeName, r.path, r.source)
				}
			}
		}
	}
	check("", resourceRules)
	check("data.", dataSourceRules)
}

func TestUnknownValuesPass(t *testing.T) {
	srv := testServer(t)
	unknown := tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	if got := validate(t, srv, "aws_db_proxy", map[string]any{"name": unknown, "auth.secret_arn": unknown}); got != "" {
		t.Errorf("unknown values rejected: %s", got)
	}
	// An unknown member of an exactly-one-of group waits for plan.
	if got := validate(t, srv, "aws_db_proxy_target", map[string]any{"db_cluster_identifier": unknown}); got != "" {
		t.Errorf("unknown exactly-one-of member rejected: %s", got)
	}
}

func TestConfigValidators(t *testing.T) {
	srv := testServer(t)
	cases := []struct {
		name, typeName string
		attrs          map[string]any
		message        string // "" = valid
	}{
		{"proxy target needs one target", "aws_db_proxy_target", map[string]any{"db_proxy_name": "p"},
			"Invalid combination of arguments \"db_cluster_identifier\": one of `db_cluster_identifier,db_instance_identifier` must be specified"},
		{"proxy target takes only one target", "aws_db_proxy_target", map[string]any{"db_cluster_identifier": "a", "db_instance_identifier": "b"},
			"only one of `db_cluster_identifier,db_instance_identifier` can be specified, but `db_cluster_identifier,db_instance_identifier` were specified."},
		{"lambda needs its code", "aws_lambda_function", map[string]any{"function_name": "f"}, "one of `filename,image_uri,s3_bucket` must be specified"},
		{"lambda takes one architecture", "aws_lambda_function", map[string]any{"filename": "f.zip",
			"architectures": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "arm64"), tftypes.NewValue(tftypes.String, "x86_64")})},
			"Too many list items Attribute supports 1 item maximum, but config has 2 declared."},
		{"flow log needs a source", "aws_flow_log", map[string]any{"traffic_type": "ALL"}, "one of `eni_id,regional_nat_gateway_id,subnet_id,vpc_id,transit_gateway_id,transit_gateway_attachment_id` must be specified"},
		{"rule needs one peer", "aws_vpc_security_group_ingress_rule", map[string]any{"cidr_ipv4": "10.0.0.0/8", "referenced_security_group_id": "sg-1"},
			"Invalid Attribute Combination Exactly one of these attributes must be configured: [cidr_ipv4,cidr_ipv6,prefix_list_id,referenced_security_group_id]"},
		{"egress rule with one peer", "aws_vpc_security_group_egress_rule", map[string]any{"referenced_security_group_id": "sg-1"}, ""},
		{"role name and prefix conflict", "aws_iam_role", map[string]any{"name": "r", "name_prefix": "r-"}, `Conflicting configuration arguments "name": conflicts with name_prefix`},
		{"cluster identifier and prefix conflict", "aws_rds_cluster", map[string]any{"cluster_identifier": "a", "cluster_identifier_prefix": "a-"}, `"cluster_identifier": conflicts with cluster_identifier_prefix`},
		{"managed password conflicts with a password", "aws_rds_cluster", map[string]any{"manage_master_user_password": true, "master_password": "pw"}, `"manage_master_user_password": conflicts with master_password`},
		{"instance identifier and prefix conflict", "aws_rds_cluster_instance", map[string]any{"identifier": "a", "identifier_prefix": "a-"}, `"identifier": conflicts with identifier_prefix`},
		{"parameter group name and prefix conflict", "aws_rds_cluster_parameter_group", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"subnet group name and prefix conflict", "aws_db_subnet_group", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"log group name and prefix conflict", "aws_cloudwatch_log_group", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"role policy name and prefix conflict", "aws_iam_role_policy", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"security group name and prefix conflict", "aws_security_group", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"topic name and prefix conflict", "aws_sns_topic", map[string]any{"name": "a", "name_prefix": "a-"}, `"name": conflicts with name_prefix`},
		{"subnet zone and zone id conflict", "aws_subnet", map[string]any{"availability_zone": "us-east-1a", "availability_zone_id": "use1-az1"}, `"availability_zone": conflicts with availability_zone_id`},
		{"alarm ok_actions at most 5", "aws_cloudwatch_metric_alarm", map[string]any{"ok_actions": setOf("arn:aws:sns:us-east-1:123456789012:a", "arn:aws:sns:us-east-1:123456789012:b",
			"arn:aws:sns:us-east-1:123456789012:c", "arn:aws:sns:us-east-1:123456789012:d", "arn:aws:sns:us-east-1:123456789012:e", "arn:aws:sns:us-east-1:123456789012:f")},
			"Attribute supports 5 item maximum, but config has 6 declared."},
		{"alarm dimensions conflict with metric_query", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.id": "m",
			"dimensions": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"A": tftypes.NewValue(tftypes.String, "b")})},
			`"dimensions": conflicts with metric_query`},
		{"alarm metric_name conflicts with metric_query", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.id": "m", "metric_name": "CPU"}, `"metric_name": conflicts with metric_query`},
		{"alarm namespace conflicts with metric_query", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.id": "m", "namespace": "AWS/RDS"}, `"namespace": conflicts with metric_query`},
		{"alarm period conflicts with metric_query", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.id": "m", "period": 60}, `"period": conflicts with metric_query`},
		{"alarm statistic conflicts with metric_query", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.id": "m", "statistic": "Sum"}, `"statistic": conflicts with metric_query`},
		{"alarm statistic conflicts with extended_statistic", "aws_cloudwatch_metric_alarm", map[string]any{"statistic": "Sum", "extended_statistic": "p99"}, `"statistic": conflicts with extended_statistic`},
		{"alarm threshold conflicts with threshold_metric_id", "aws_cloudwatch_metric_alarm", map[string]any{"threshold": 1, "threshold_metric_id": "m"}, `"threshold": conflicts with threshold_metric_id`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := validate(t, srv, c.typeName, c.attrs)
			if c.message == "" && got != "" {
				t.Errorf("rejected: %s", got)
			}
			if c.message != "" && !strings.Contains(got, c.message) {
				t.Errorf("want a diagnostic containing\n  %s\ngot\n  %s", c.message, got)
			}
		})
	}
}

func setOf(values ...string) tftypes.Value {
	var elems []tftypes.Value
	for _, v := range values {
		elems = append(elems, tftypes.NewValue(tftypes.String, v))
	}
	return tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, elems)
}

// The plan-time (CustomizeDiff) checks run when a create is planned.
func TestPlanValidators(t *testing.T) {
	srv := testServer(t)
	cases := []struct {
		name, typeName string
		attrs          map[string]any
		message        string
	}{
		{"topic name pattern", "aws_sns_topic", map[string]any{"name": "db.alarms"}, "invalid topic name: db.alarms"},
		{"topic name valid", "aws_sns_topic", map[string]any{"name": "db-alarms"}, ""},
		{"fifo topic name needs .fifo", "aws_sns_topic", map[string]any{"name": "db-alarms", "fifo_topic": true}, "invalid topic name: db-alarms"},
		{"alarm needs a statistic", "aws_cloudwatch_metric_alarm", map[string]any{"metric_name": "CPU"}, "One of `statistic` or `extended_statistic` must be set for a cloudwatch metric alarm"},
		{"alarm with a statistic", "aws_cloudwatch_metric_alarm", map[string]any{"metric_name": "CPU", "statistic": "Average"}, ""},
		{"metric query with expression and metric", "aws_cloudwatch_metric_alarm", map[string]any{"metric_query.expression": "m1", "metric_query.metric.metric_name": "CPU"},
			"No metric_query may have both `expression` and a `metric` specified"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sch := srv.schemas.Resources[c.typeName]
			cfg := emptyState(sch.Block, nil)
			for path, x := range c.attrs {
				cfg = withValue(t, sch.Block, cfg, path, x)
			}
			dv, err := tfprotov5.NewDynamicValue(sch.ValueType(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := srv.PlanResourceChange(context.Background(), &tfprotov5.PlanResourceChangeRequest{TypeName: c.typeName, Config: &dv, ProposedNewState: &dv})
			var got []string
			for _, d := range resp.Diagnostics {
				got = append(got, d.Summary)
			}
			text := strings.Join(got, "\n")
			if c.message == "" && text != "" {
				t.Errorf("rejected: %s", text)
			}
			if c.message != "" && !strings.Contains(text, c.message) {
				t.Errorf("want %q, got %q", c.message, text)
			}
		})
	}
}
