//go:build aws

package terratest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	awsmod "github.com/gruntwork-io/terratest/modules/aws"
	"github.com/gruntwork-io/terratest/modules/random"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompleteOnAWS applies modules/examples/complete in a real account (go test -tags aws), proves that the
// reader Lambda reads through the READ_ONLY endpoint (a reader answers, in recovery) and the writer
// Lambda writes through the READ_WRITE endpoint (the writer answers), checks the dashboard, and destroys.
// It needs credentials and the real hashicorp/aws provider (TF_REAL_PROVIDER=1 is set for it).
func TestCompleteOnAWS(t *testing.T) {
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" && os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE") == "" {
		t.Skip("skipping the AWS integration suite: no AWS credentials (set AWS_PROFILE or AWS_ACCESS_KEY_ID, and AWS_REGION); it creates an Aurora cluster, which costs money")
	}
	os.Setenv("TF_REAL_PROVIDER", "1")
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	name := "kit-" + strings.ToLower(random.UniqueId())
	opts := terraformOptions(t, exampleCopy(t, "complete"), map[string]interface{}{
		"name": name, "region": region, "deletion_protection": false, "readers": 1,
	})
	defer terraform.Destroy(t, opts)
	terraform.InitAndApply(t, opts)

	writerFn := terraform.Output(t, opts, "writer_function")
	readerFn := terraform.Output(t, opts, "reader_function")

	var written struct {
		ServedBy struct {
			InRecovery bool `json:"in_recovery"`
		} `json:"served_by"`
	}
	out := awsmod.InvokeFunction(t, region, writerFn, map[string]interface{}{"id": 1, "payload": map[string]string{"by": name}})
	require.NoError(t, json.Unmarshal(out, &written))
	assert.False(t, written.ServedBy.InRecovery, "writes must reach the writer through the READ_WRITE endpoint")

	var read struct {
		ServedBy struct {
			InRecovery bool `json:"in_recovery"`
		} `json:"served_by"`
	}
	out = awsmod.InvokeFunction(t, region, readerFn, map[string]interface{}{"id": 1})
	require.NoError(t, json.Unmarshal(out, &read))
	assert.True(t, read.ServedBy.InRecovery, "reads must reach a reader through the READ_ONLY endpoint")

	dashboard := terraform.Output(t, opts, "dashboard_name")
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region))
	require.NoError(t, err)
	got, err := cloudwatch.NewFromConfig(cfg).GetDashboard(context.Background(), &cloudwatch.GetDashboardInput{DashboardName: aws.String(dashboard)})
	require.NoError(t, err)
	for _, metric := range []string{"AuroraOptimizedReadsCacheHitRatio", "DatabaseConnectionsCurrentlySessionPinned", "ConcurrentExecutions"} {
		assert.True(t, strings.Contains(aws.ToString(got.DashboardBody), metric), "dashboard charts %s", metric)
	}
}
