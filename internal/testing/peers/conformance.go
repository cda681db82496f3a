package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// ConformanceCmd returns the command line of the conformance suite's CLI run
// with Node 22: the absolute path of node and the CLI's entry point, to which
// the caller appends a subcommand such as "server --url URL". It skips the
// test when the peers are not installed.
func ConformanceCmd(t testing.TB) (cmd string, args []string) {
	t.Helper()
	in := usable(t)
	return in.node, []string{in.conformance}
}

// Check statuses reported by the conformance suite.
const (
	StatusSuccess = "SUCCESS"
	StatusFailure = "FAILURE"
	StatusWarning = "WARNING"
)

// Check is one conformance check as written to checks.json.
type Check struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
}

// ScenarioResult holds the checks of one scenario.
type ScenarioResult struct {
	Scenario string
	Checks   []Check
}

// Passed reports whether the scenario ran at least one check and none
// failed.
func (r ScenarioResult) Passed() bool {
	return len(r.Checks) > 0 && !slices.ContainsFunc(r.Checks, func(c Check) bool { return c.Status == StatusFailure })
}

// Failures returns the failed checks, each as "id: message".
func (r ScenarioResult) Failures() []string {
	return r.checks(StatusFailure, func(c Check) string { return c.ErrorMessage })
}

// checks returns the checks with status, each as "id: " and what text says
// of it.
func (r ScenarioResult) checks(status string, text func(Check) string) []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == status {
			out = append(out, c.ID+": "+text(c))
		}
	}
	return out
}

// ConformanceResult is the outcome of one run of the conformance CLI.
type ConformanceResult struct {
	// Scenarios holds the results per scenario, sorted by name.
	Scenarios []ScenarioResult
	// ExitCode is the CLI's exit status: 0 when every check passed (or,
	// with --expected-failures, when exactly the listed scenarios failed).
	ExitCode int
	// Output is what the CLI printed (stdout and stderr, colors removed).
	Output string
}

// Scenario returns the result of the named scenario.
func (r *ConformanceResult) Scenario(name string) (ScenarioResult, bool) {
	i := slices.IndexFunc(r.Scenarios, func(s ScenarioResult) bool { return s.Scenario == name })
	if i < 0 {
		return ScenarioResult{}, false
	}
	return r.Scenarios[i], true
}

// RunConformance runs the conformance suite's server scenarios against the
// streamable HTTP endpoint url and returns the parsed results. extra is
// appended to "server --url URL -o DIR", for example "--scenario", "ping" or
// "--suite", "all" or "--expected-failures", path. A run that produces no
// result at all (bad flag, unknown scenario, ctx done) fails the test; failed
// checks do not: the caller judges the result. It skips the test when the
// peers are not installed.
func RunConformance(t testing.TB, ctx context.Context, url string, extra ...string) *ConformanceResult {
	t.Helper()
	return runSuite(t, ctx, []string{"server", "--url", url}, readResults, extra)
}

// runSuite runs the suite with args, then "-o DIR" and extra, and reads its
// results from DIR with read. A run that produces no result at all fails the
// test.
func runSuite(t testing.TB, ctx context.Context, args []string, read func(dir string) ([]ScenarioResult, error), extra []string) *ConformanceResult {
	t.Helper()
	node, cmd := ConformanceCmd(t)
	dir := t.TempDir()
	cmd = append(append(append(cmd, args...), "-o", dir), extra...)
	out, code, err := runNode(ctx, node, cmd)
	if err != nil {
		t.Fatalf("conformance %s: %v\n%s", strings.Join(cmd[1:], " "), err, out)
	}
	res := &ConformanceResult{ExitCode: code, Output: out}
	if res.Scenarios, err = read(dir); err != nil {
		t.Fatalf("conformance results: %v\n%s", err, out)
	}
	if len(res.Scenarios) == 0 {
		t.Fatalf("conformance %s produced no results (exit status %d):\n%s", strings.Join(cmd[1:], " "), code, out)
	}
	return res
}

// ConformanceScenarios returns the names of the suite's server scenarios, as
// listed by "list --server".
func ConformanceScenarios(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return listScenarios(t, ctx, "--server")
}

// listScenarios returns the names the suite lists with "list SIDE".
func listScenarios(t testing.TB, ctx context.Context, side string) []string {
	t.Helper()
	node, args := ConformanceCmd(t)
	out, code, err := runNode(ctx, node, append(args, "list", side))
	if err != nil || code != 0 {
		t.Fatalf("conformance list %s: exit status %d, %v\n%s", side, code, err, out)
	}
	names := parseScenarioList(out)
	if len(names) == 0 {
		t.Fatalf("conformance list %s listed no scenarios:\n%s", side, out)
	}
	return names
}

// parseScenarioList extracts NAME from each "  - NAME [versions]" line.
func parseScenarioList(out string) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "- ")
		if !ok {
			continue
		}
		if f := strings.Fields(rest); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// runNode runs node with args in its own process group, killed with the
// group when ctx is done. A non-zero exit is reported in code, not err.
func runNode(ctx context.Context, node string, args []string) (out string, code int, err error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = lookup().root
	cmd.Stdout, cmd.Stderr = &buf, &buf
	configure(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = stopGrace
	err = cmd.Run()
	out = ansiEscape.ReplaceAllString(buf.String(), "")
	if ctx.Err() != nil {
		return out, -1, ctx.Err()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return out, exit.ExitCode(), nil
	}
	if err != nil {
		return out, -1, err
	}
	return out, 0, nil
}

// ansiEscape matches the color sequences the CLI prints whatever NO_COLOR
// says.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// resultDir matches the directories the CLI writes with -o:
// server-SCENARIO-YYYY-MM-DDTHH-MM-SS-mmmZ.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readResults parses every DIR/server-*/checks.json, sorted by scenario.
func readResults(dir string) ([]ScenarioResult, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []ScenarioResult
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		r := ScenarioResult{Scenario: m[1]}
		if err := json.Unmarshal(data, &r.Checks); err != nil {
			return nil, fmt.Errorf("%s/checks.json: %w", e.Name(), err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ScenarioResult) int { return strings.Compare(a.Scenario, b.Scenario) })
	return out, nil
}
