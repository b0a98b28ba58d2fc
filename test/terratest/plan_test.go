package terratest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gruntwork-io/terratest/modules/random"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Plan tests of the examples against the offline stand-in provider: the planned resource set and the
// attributes that matter. No AWS account is needed.
func TestExamplesPlan(t *testing.T) {
	t.Parallel()

	cases := []struct {
		example string
		vars    map[string]interface{}
		counts  map[string]int
		classes int
	}{
		{
			example: "complete",
			vars:    map[string]interface{}{},
			counts: map[string]int{
				"aws_vpc": 2, "aws_subnet": 4, "aws_flow_log": 2, "aws_vpc_endpoint": 1, "aws_kms_key": 3,
				"aws_rds_cluster": 1, "aws_rds_cluster_instance": 3, "aws_db_proxy": 1, "aws_db_proxy_default_target_group": 1,
				"aws_db_proxy_target": 1, "aws_db_proxy_endpoint": 2, "aws_cloudwatch_dashboard": 1,
				"aws_cloudwatch_metric_alarm": 19, "aws_sns_topic": 1,
				// Two consumers and the role bootstrap, each with its own security group (plus the proxy's,
				// the endpoints', the cluster's and the Secrets Manager endpoint's).
				"aws_lambda_function": 3, "aws_lambda_invocation": 1, "aws_security_group": 8,
			},
			classes: 3,
		},
		{
			example: "complete",
			vars:    map[string]interface{}{"readers": 4, "read_only_endpoints": 3, "instance_class": "db.r8gd.2xlarge"},
			counts:  map[string]int{"aws_rds_cluster_instance": 5, "aws_db_proxy_endpoint": 4, "aws_cloudwatch_metric_alarm": 27},
			classes: 5,
		},
		{
			example: "complete-pgbouncer",
			vars:    map[string]interface{}{},
			counts: map[string]int{
				"aws_vpc": 2, "aws_subnet": 4, "aws_rds_cluster": 1, "aws_rds_cluster_instance": 3, "aws_db_proxy": 0,
				"aws_launch_template": 1, "aws_autoscaling_group": 1, "aws_lb": 1, "aws_lb_listener": 2, "aws_lb_target_group": 2,
				"aws_vpc_endpoint_service": 1, "aws_iam_instance_profile": 1,
				// The server role's, two consumers', and the listeners' certificate with its CA's.
				"aws_secretsmanager_secret": 5,
				// The listeners' certificate, issued by the module's CA at apply; the role bootstrap, run at apply; two consumers.
				"aws_lambda_function": 4, "aws_lambda_invocation": 2,
				// S3 gateway, five interface endpoints the hosts call, the two consumer endpoints and the consumers' Secrets Manager.
				"aws_vpc_endpoint": 9,
				// Hosts, load balancer, two consumer endpoints, the cluster, the hosts' service endpoints, the consumers'
				// Secrets Manager endpoint, two consumers, the role bootstrap.
				"aws_security_group": 10,
				// Three per instance and lag per reader; waiting clients and max wait per pool target (the writer,
				// two readers and the writer instance, which the promoted reader's read-only pools use after a
				// failover), unhealthy and missing hosts per listener; errors and throttles per consumer.
				"aws_cloudwatch_dashboard": 1, "aws_cloudwatch_metric_alarm": 3*3 + 2 + 2*4 + 2*2 + 2*2,
			},
			classes: 3,
		},
		{
			example: "minimal",
			vars:    map[string]interface{}{},
			counts:  map[string]int{"aws_vpc": 1, "aws_rds_cluster": 1, "aws_rds_cluster_instance": 2, "aws_db_proxy": 1, "aws_db_proxy_endpoint": 1, "aws_lambda_function": 0},
			classes: 2,
		},
	}

	for i, tc := range cases {
		tc := tc
		t.Run(fmt.Sprintf("%s_%d", tc.example, i), func(t *testing.T) {
			t.Parallel()
			vars := map[string]interface{}{}
			for k, v := range tc.vars {
				vars[k] = v
			}
			if tc.example != "minimal" {
				// Unique names, as a real run would need.
				vars["name"] = "kit-" + strings.ToLower(random.UniqueId())
			}
			dir := exampleCopy(t, tc.example)
			plan := terraform.InitAndPlanAndShowWithStruct(t, terraformOptions(t, dir, vars))

			counts := map[string]int{}
			for _, rc := range plan.ResourceChangesMap {
				if rc.Mode == "managed" {
					counts[rc.Type]++
				}
			}
			for typ, want := range tc.counts {
				assert.Equal(t, want, counts[typ], "planned %s", typ)
			}

			instances := 0
			for _, rc := range plan.ResourceChangesMap {
				after, _ := rc.Change.After.(map[string]interface{})
				switch rc.Type {
				case "aws_rds_cluster":
					assert.Equal(t, "aurora-iopt1", after["storage_type"])
					assert.Equal(t, true, after["storage_encrypted"])
					assert.Equal(t, true, after["iam_database_authentication_enabled"])
					assert.Equal(t, true, after["manage_master_user_password"])
				case "aws_rds_cluster_instance":
					instances++
					want := "db.r6gd.xlarge"
					if c, ok := tc.vars["instance_class"]; ok {
						want = c.(string)
					}
					assert.Equal(t, want, after["instance_class"])
				case "aws_db_proxy":
					assert.Equal(t, true, after["require_tls"])
					// End-to-end IAM: clients and the proxy log in with IAM; no secret entry.
					assert.Equal(t, "IAM_AUTH", after["default_auth_scheme"])
					assert.Empty(t, after["auth"])
				case "aws_db_proxy_endpoint":
					assert.Contains(t, []interface{}{"READ_ONLY", "READ_WRITE"}, after["target_role"])
				case "aws_autoscaling_group":
					// Fixed size: each PgBouncer process's pool is a share of each target's budget.
					assert.EqualValues(t, 2, after["min_size"])
					assert.EqualValues(t, 2, after["max_size"])
					assert.EqualValues(t, 2, after["desired_capacity"])
				case "aws_launch_template":
					md := after["metadata_options"].([]interface{})[0].(map[string]interface{})
					assert.Equal(t, "required", md["http_tokens"])
					assert.EqualValues(t, 1, md["http_put_response_hop_limit"])
				case "aws_lb":
					assert.Equal(t, true, after["internal"])
					assert.Equal(t, "network", after["load_balancer_type"])
				case "aws_lb_listener":
					assert.Contains(t, []interface{}{float64(5432), float64(5433)}, after["port"])
					assert.EqualValues(t, 350, after["tcp_idle_timeout_seconds"])
				case "aws_lambda_function":
					assert.Equal(t, "nodejs24.x", after["runtime"])
					if strings.HasSuffix(fmt.Sprint(after["function_name"]), "-pooler-certificate") {
						// It calls only Secrets Manager: outside any VPC.
						assert.Len(t, after["vpc_config"], 0)
					} else {
						assert.Len(t, after["vpc_config"], 1)
					}
				}
			}
			require.Equal(t, tc.classes, instances)
		})
	}
}

// A class without NVMe fails plan with the CDK construct's message, naming the variable where CDK names the prop.
func TestCompleteRefusesClassWithoutNVMe(t *testing.T) {
	t.Parallel()
	dir := exampleCopy(t, "complete")
	opts := terraformOptions(t, dir, map[string]interface{}{"instance_class": "db.r6g.xlarge"})
	terraform.Init(t, opts)
	out, err := terraform.PlanE(t, opts)
	require.Error(t, err)
	assert.Contains(t, out, "instance_class db.r6g.xlarge has no local NVMe")
}
