package terratest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	test_structure "github.com/gruntwork-io/terratest/modules/test-structure"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRehearsalDataPath treats the local rehearsal (`npx aurora-proxy-kit rehearse`) as a deploy target, in terratest
// stages: deploy (`rehearse up`, then its endpoint outputs from `rehearse outputs --json`), validate
// (validateDataPath, which only needs those outputs) and teardown (`rehearse down`, then no tracked
// process may be left). Stages can be skipped with SKIP_<stage>=1 and run one at a time, e.g.:
//
//	SKIP_validate=1 SKIP_teardown=1 go test -run TestRehearsalDataPath   # deploy only
//	SKIP_deploy=1 SKIP_teardown=1 go test -run TestRehearsalDataPath     # validate, as often as wanted
//	SKIP_deploy=1 SKIP_validate=1 go test -run TestRehearsalDataPath     # teardown
//
// The stage data (work dir, endpoint outputs) lives in <repo>/.cache/terratest/rehearsal/.test-data.
// Needs the Debian packages, PgBouncer 1.24 and node_modules that `make system-deps pgbouncer node-deps` install.
func TestRehearsalDataPath(t *testing.T) {
	root := repoRoot(t)
	stageDir := filepath.Join(root, ".cache", "terratest", "rehearsal")
	require.NoError(t, os.MkdirAll(stageDir, 0o755))

	test_structure.RunTestStage(t, "deploy", func() { deployRehearsal(t, root, stageDir) })
	defer test_structure.RunTestStage(t, "teardown", func() { teardownRehearsal(t, root, stageDir) })

	test_structure.RunTestStage(t, "validate", func() {
		var endpoints Endpoints
		test_structure.LoadTestData(t, test_structure.FormatTestDataPath(stageDir, "endpoints.json"), &endpoints)
		validateDataPath(t, endpoints)
	})
}

const rehearsalReplicas = 2

// rehearsalAddressBlock is this test's loopback block: SUITE_BLOCKS.terratest of
// test/support/loopback-blocks.ts, which keeps every live rehearsal on a block of its own; the block
// plan's test checks that this line says the same.
const rehearsalAddressBlock = "127.0.50"

func deployRehearsal(t *testing.T, root, stageDir string) {
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "ts-node")); err != nil {
		t.Fatalf("no node_modules/.bin/ts-node in %s: run `make node-deps system-deps` (make terratest does)", root)
	}
	// Not t.TempDir(): it must outlive this process when stages run separately, and every ancestor must be
	// traversable by the postgres user the servers run as when this runs as root.
	workDir, err := os.MkdirTemp("", "kit-rehearsal-terratest-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(workDir, 0o755))
	test_structure.SaveString(t, stageDir, "work_dir", workDir)

	rehearse(t, root, 100*time.Second, "up", "--work-dir", workDir, "--address-block", rehearsalAddressBlock, "--replicas", strconv.Itoa(rehearsalReplicas))
	out := rehearse(t, root, 30*time.Second, "outputs", "--json", "--work-dir", workDir)

	var endpoints Endpoints
	require.NoError(t, json.Unmarshal([]byte(out), &endpoints), "rehearse outputs --json printed %q", out)
	require.NotEmpty(t, endpoints.ReadWrite.Host)
	require.NotEmpty(t, endpoints.ReadOnly.Host)
	endpoints.ExpectedReaders = rehearsalReplicas
	// Stored like test_structure.SaveTestData (LoadTestData reads it back), but 0600 and not logged:
	// SaveTestData would print the password.
	path := test_structure.FormatTestDataPath(stageDir, "endpoints.json")
	raw, err := json.Marshal(endpoints)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, raw, 0o600))
}

func teardownRehearsal(t *testing.T, root, stageDir string) {
	workDir := test_structure.LoadString(t, stageDir, "work_dir")
	stateFile := filepath.Join(workDir, "state.json")
	if _, err := os.Stat(stateFile); err == nil {
		pids := trackedPids(t, filepath.Join(workDir, "processes.json"))
		rehearse(t, root, 60*time.Second, "down", "--work-dir", workDir)
		// `down` verifies this itself and fails otherwise; check from the outside too, including the
		// process groups (PostgreSQL backends, pgpool children), zombies aside.
		assert.Empty(t, liveGroupMembers(pids), "processes of the rehearsal still running after down (pid: processes.json)")
	} else {
		t.Logf("no %s: nothing was started (or it is already down)", stateFile)
	}
	require.NoError(t, os.RemoveAll(workDir))
	test_structure.CleanupTestDataFolder(t, stageDir)
}

// rehearse runs the CLI from the repository root, bounded by timeout, and returns its stdout.
func rehearse(t *testing.T, root string, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npx", append([]string{"--no-install", "aurora-proxy-kit", "rehearse"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false")
	// Its own process group, so a timeout also stops the node process npx started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	t.Logf("rehearse %s (%.1f s)\n%s%s", strings.Join(args, " "), time.Since(started).Seconds(), redactOutputs(args, stdout.String()), stderr.String())
	if ctx.Err() != nil {
		t.Fatalf("rehearse %s: timed out after %s", args[0], timeout)
	}
	require.NoErrorf(t, err, "rehearse %s", args[0])
	return stdout.String()
}

// redactOutputs keeps the endpoint password out of the test log.
func redactOutputs(args []string, out string) string {
	if args[0] != "outputs" {
		return out
	}
	return "(endpoint outputs, not logged: they hold the password)\n"
}

// trackedPids are the pids in the rehearsal's process table (processes.json: up, the health checker and its
// supervisor record every process they start there). A table it cannot read fails the test but not the
// teardown: `down` still runs.
func trackedPids(t *testing.T, processesFile string) []int {
	t.Helper()
	raw, err := os.ReadFile(processesFile)
	if !assert.NoError(t, err) {
		return nil
	}
	var table struct {
		Processes []struct {
			Name string `json:"name"`
			Pid  int    `json:"pid"`
		} `json:"processes"`
	}
	if !assert.NoError(t, json.Unmarshal(raw, &table)) {
		return nil
	}
	pids := make([]int, 0, len(table.Processes))
	for _, p := range table.Processes {
		pids = append(pids, p.Pid)
	}
	assert.NotEmpty(t, pids, "no processes in %s", processesFile)
	return pids
}

// liveGroupMembers lists the processes (not zombies) that are one of pids or in their process groups
// (each rehearsal process leads its own group), as "pid: state".
func liveGroupMembers(pids []int) []string {
	wanted := map[int]bool{}
	for _, p := range pids {
		wanted[p] = true
	}
	entries, _ := os.ReadDir("/proc")
	var live []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		pgrp, _ := strconv.Atoi(fields[2])
		if wanted[pid] || wanted[pgrp] {
			live = append(live, strconv.Itoa(pid)+": "+strings.TrimSpace(s[:strings.LastIndexByte(s, ')')+1]))
		}
	}
	return live
}
