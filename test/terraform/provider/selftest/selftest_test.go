// Package selftest proves the offline hashicorp/aws stand-in is not a rubber stamp: Terraform's own
// validation must reject a misspelled argument, a wrong type, a missing required argument and a
// block count the real schema forbids; the stand-in must reject what the real provider's
// validators refuse (an RDS identifier, an IAM name_prefix length, an enum); it must plan a valid
// configuration with computed attributes "(known after apply)", and apply must fail with the
// stand-in's message.
//
// It runs terraform (TERRAFORM, else terraform on PATH, else <repo>/.cache/bin/terraform) in
// temporary copies of testdata/<case>, with TF_CLI_CONFIG_FILE pointing at the mirror that
// ../install.sh builds. With TF_SELFTEST_REAL_PROVIDER=1 it uses the ambient CLI configuration
// instead (a machine that reaches the registry: the real hashicorp/aws) and runs only the
// validate cases, which then check that the stand-in's errors are the real provider's errors.
package selftest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aurora-proxy-kit/aurora-proxy-kit/test/terraform/provider/internal/provider"
)

const commandTimeout = 2 * time.Minute

var (
	terraformBin string
	cliConfig    string // TF_CLI_CONFIG_FILE for the stand-in; empty in real-provider mode
	realProvider = os.Getenv("TF_SELFTEST_REAL_PROVIDER") == "1"
	setupErr     error
)

func repoRoot() string {
	wd, _ := os.Getwd() // <repo>/test/terraform/provider/selftest
	return filepath.Clean(filepath.Join(wd, "..", "..", "..", ".."))
}

func findTerraform() (string, error) {
	if p := os.Getenv("TERRAFORM"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("terraform"); err == nil {
		return p, nil
	}
	p := filepath.Join(repoRoot(), ".cache", "bin", "terraform")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no terraform: set TERRAFORM, put terraform >= 1.5 on PATH, or run test/terraform/provider/install-terraform.sh")
}

func setup() error {
	var err error
	if terraformBin, err = findTerraform(); err != nil {
		return err
	}
	if realProvider {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "install.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("install.sh: %v\n%s", err, stderr.String())
	}
	line := strings.TrimSpace(string(out))
	cfg, ok := strings.CutPrefix(line, "export TF_CLI_CONFIG_FILE=")
	if !ok {
		return fmt.Errorf("install.sh printed %q, want an export TF_CLI_CONFIG_FILE line", line)
	}
	cliConfig = cfg
	return nil
}

func TestMain(m *testing.M) {
	setupErr = setup()
	os.Exit(m.Run())
}

// workdir copies testdata/<name> into a temporary directory.
func workdir(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

type result struct {
	stdout, stderr string
	exitCode       int
}

func terraform(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, terraformBin, args...)
	cmd.Dir = dir
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "CHECKPOINT_DISABLE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	if cliConfig != "" {
		env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig)
	} else if v, ok := os.LookupEnv("TF_CLI_CONFIG_FILE"); ok {
		env = append(env, "TF_CLI_CONFIG_FILE="+v)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("terraform %s: timed out after %s", strings.Join(args, " "), commandTimeout)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return result{stdout.String(), stderr.String(), code}
}

func initDir(t *testing.T, dir string) {
	t.Helper()
	r := terraform(t, dir, "init", "-input=false", "-no-color")
	if r.exitCode != 0 {
		t.Fatalf("terraform init failed (%d):\n%s\n%s", r.exitCode, r.stdout, r.stderr)
	}
}

type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
}

func requireSetup(t *testing.T) {
	t.Helper()
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

func TestValidateRejects(t *testing.T) {
	requireSetup(t)
	cases := []struct {
		fixture, summary, detail string
	}{
		{"misspelled", "Unsupported argument", `An argument named "stroage_encrypted" is not expected here. Did you mean "storage_encrypted"?`},
		{"wrong_type", "Incorrect attribute value type", `Inappropriate value for attribute "backup_retention_period": a number is required.`},
		{"missing_required", "Missing required argument", `The argument "engine_family" is required, but no definition was found.`},
		{"too_many_blocks", "Too many serverlessv2_scaling_configuration blocks", `No more than 1 "serverlessv2_scaling_configuration" blocks are allowed`},
		{"block_as_argument", "Unsupported argument", `An argument named "vpc_config" is not expected here. Did you mean to define a block of type "vpc_config"?`},
		// The real provider's plan-time validators (internal/provider/validators.go): SDKv2 puts the message in the summary.
		{"invalid_identifier", `only lowercase alphanumeric characters and hyphens allowed in "name"`, ""},
		{"name_prefix_too_long", "expected length of name_prefix to be in the range (1 - 38), got selftest-proxy-role-with-a-long-prefix-", ""},
		{"invalid_enum", `expected target_role to be one of ["READ_WRITE" "READ_ONLY"], got READ`, ""},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			t.Parallel()
			dir := workdir(t, c.fixture)
			initDir(t, dir)
			r := terraform(t, dir, "validate", "-json", "-no-color")
			if r.exitCode == 0 {
				t.Fatalf("terraform validate accepted %s:\n%s", c.fixture, r.stdout)
			}
			var out struct {
				Valid       bool         `json:"valid"`
				Diagnostics []diagnostic `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatalf("validate -json output: %v\n%s\n%s", err, r.stdout, r.stderr)
			}
			if out.Valid || len(out.Diagnostics) != 1 {
				t.Fatalf("want exactly one error, got valid=%v diagnostics=%+v", out.Valid, out.Diagnostics)
			}
			d := out.Diagnostics[0]
			if d.Severity != "error" || d.Summary != c.summary || d.Detail != c.detail {
				t.Fatalf("got %s %q / %q\nwant error %q / %q", d.Severity, d.Summary, d.Detail, c.summary, c.detail)
			}
		})
	}
}

func TestValidConfigValidatesAndPlans(t *testing.T) {
	requireSetup(t)
	t.Parallel()
	dir := workdir(t, "valid")
	initDir(t, dir)
	if r := terraform(t, dir, "validate", "-no-color"); r.exitCode != 0 {
		t.Fatalf("terraform validate failed:\n%s\n%s", r.stdout, r.stderr)
	}
	if realProvider {
		t.Skip("real provider: plan needs AWS credentials; validate passed")
	}
	r := terraform(t, dir, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if r.exitCode != 2 {
		t.Fatalf("terraform plan: exit %d, want 2 (changes):\n%s\n%s", r.exitCode, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`Plan: 4 to add, 0 to change, 0 to destroy\.`,
		`# aws_rds_cluster\.db will be created(?s:.*?)\+ arn += \(known after apply\)`, // computed, unknown at plan
		`\+ seconds_until_auto_pause += \(known after apply\)`,                         // computed inside a nested block
		`\+ proxy_endpoint += \(known after apply\)`,
		`"eu-west-1a"`, // aws_availability_zones follows the provider region
		`\+ AWS += "arn:aws:iam::123456789012:root"`,      // policy document rendered from data sources
		`\+ Service += "logs\.eu-west-1\.amazonaws\.com"`, // aws_region follows the provider region
	} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("plan output does not match %s", want)
		}
	}
	if t.Failed() {
		t.Logf("plan output:\n%s", r.stdout)
	}
}

func TestApplyRefuses(t *testing.T) {
	requireSetup(t)
	if realProvider {
		t.Skip("real provider: never apply from the self-test")
	}
	t.Parallel()
	dir := workdir(t, "valid")
	initDir(t, dir)
	r := terraform(t, dir, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
	if r.exitCode == 0 {
		t.Fatalf("terraform apply succeeded with the stand-in:\n%s", r.stdout)
	}
	var summaries []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var msg struct {
			Type       string     `json:"type"`
			Diagnostic diagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Type == "diagnostic" && msg.Diagnostic.Severity == "error" {
			summaries = append(summaries, msg.Diagnostic.Summary)
		}
	}
	if len(summaries) == 0 {
		t.Fatalf("no error diagnostics in apply output:\n%s\n%s", r.stdout, r.stderr)
	}
	for _, s := range summaries {
		if s != provider.ApplyRefusal {
			t.Errorf("apply error %q, want %q", s, provider.ApplyRefusal)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err == nil {
		b, _ := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
		if bytes.Contains(b, []byte(`"mode": "managed"`)) {
			t.Errorf("apply recorded managed resources in state:\n%s", b)
		}
	}
}

// terraform test: plan runs against the stand-in, apply runs against mock_provider.
func TestTerraformTest(t *testing.T) {
	requireSetup(t)
	if realProvider {
		t.Skip("real provider: the plan run reads data sources, which needs AWS credentials")
	}
	t.Parallel()
	dir := workdir(t, "terraform_test")
	initDir(t, dir)
	r := terraform(t, dir, "test", "-no-color")
	if r.exitCode != 0 || !strings.Contains(r.stdout, "Success! 2 passed, 0 failed.") {
		t.Fatalf("terraform test: exit %d\n%s\n%s", r.exitCode, r.stdout, r.stderr)
	}
}
