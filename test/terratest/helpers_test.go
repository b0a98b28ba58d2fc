package terratest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"

	"github.com/gruntwork-io/terratest/modules/terraform"
	test_structure "github.com/gruntwork-io/terratest/modules/test-structure"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	cliConfigOnce sync.Once
	cliConfig     string
	cliConfigErr  error
)

// offlineCLIConfig builds the stand-in hashicorp/aws provider (test/terraform/provider) once and returns
// the TF_CLI_CONFIG_FILE that points Terraform at it. With TF_REAL_PROVIDER=1 the ambient configuration
// (the registry) is used instead.
func offlineCLIConfig(t *testing.T) map[string]string {
	t.Helper()
	if os.Getenv("TF_REAL_PROVIDER") == "1" {
		return map[string]string{}
	}
	cliConfigOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join(repoRoot(t), "test/terraform/provider/install.sh")).Output()
		if err != nil {
			cliConfigErr = err
			return
		}
		m := regexp.MustCompile(`export TF_CLI_CONFIG_FILE=(\S+)`).FindSubmatch(out)
		if m == nil {
			cliConfigErr = os.ErrNotExist
			return
		}
		cliConfig = string(m[1])
	})
	if cliConfigErr != nil {
		t.Fatalf("building the offline provider: %v", cliConfigErr)
	}
	return map[string]string{"TF_CLI_CONFIG_FILE": cliConfig, "CHECKPOINT_DISABLE": "1"}
}

// exampleCopy copies the repository's modules/ (the modules and modules/examples/<name>) into a temporary
// folder, so parallel tests do not share .terraform/, and returns the example's folder in the copy. The
// copies leave out the modules' `terraform test` files: these plan tests do not run them, and their mocked
// provider reads shared values from test/terraform/mocks, outside the copy.
func exampleCopy(t *testing.T, name string) string {
	t.Helper()
	root := test_structure.CopyTerraformFolderToTemp(t, filepath.Join(repoRoot(t), "modules"), ".")
	testDirs, err := filepath.Glob(filepath.Join(root, "*", "tests"))
	if err != nil {
		t.Fatal(err)
	}
	nested, err := filepath.Glob(filepath.Join(root, "*", "*", "tests"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(testDirs, nested...) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatalf("removing %s from the copy: %v", dir, err)
		}
	}
	return filepath.Join(root, "examples", name)
}

func terraformOptions(t *testing.T, dir string, vars map[string]interface{}) *terraform.Options {
	t.Helper()
	lambdaDir := filepath.Join(repoRoot(t), "dist", "lambda")
	if _, ok := vars["lambda_dir"]; !ok && (filepath.Base(dir) == "complete" || filepath.Base(dir) == "complete-pgbouncer") {
		vars["lambda_dir"] = lambdaDir
	}
	// The hosts' AMI has no default (whoever deploys pins it): an id of the right shape for offline plans.
	if _, ok := vars["pooler_image_id"]; !ok && filepath.Base(dir) == "complete-pgbouncer" {
		vars["pooler_image_id"] = "ami-0123456789abcdef0"
	}
	return terraform.WithDefaultRetryableErrors(t, &terraform.Options{
		TerraformDir: dir,
		PlanFilePath: filepath.Join(dir, "terratest.tfplan"),
		Vars:         vars,
		EnvVars:      offlineCLIConfig(t),
		NoColor:      true,
		Lock:         false,
	})
}
