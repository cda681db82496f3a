package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Clean reports whether the scenario ran at least one check and none failed
// or warned: the conformance suite's own verdict on a client scenario.
func (r ScenarioResult) Clean() bool {
	return r.Passed() && !slices.ContainsFunc(r.Checks, func(c Check) bool { return c.Status == StatusWarning })
}

// Warnings returns the checks that warned, each as "id: description".
func (r ScenarioResult) Warnings() []string {
	return r.checks(StatusWarning, func(c Check) string { return c.Description })
}

// RunConformanceClient runs the conformance suite's client scenarios with
// the client program command (run by the suite through a shell, with the
// server URL appended and the scenario in MCP_CONFORMANCE_SCENARIO and
// MCP_CONFORMANCE_CONTEXT) and returns the parsed results. extra is
// appended to "client --command COMMAND -o DIR", for example "--suite",
// "all" (every scenario, in parallel) or "--scenario", NAME. A run that
// produces no result at all fails the test; failed checks do not. It skips
// the test when the peers are not installed.
func RunConformanceClient(t testing.TB, ctx context.Context, command string, extra ...string) *ConformanceResult {
	t.Helper()
	return runSuite(t, ctx, []string{"client", "--command", command}, readClientResults, extra)
}

// ConformanceClientScenarios returns the names of the suite's client
// scenarios, as listed by "list --client".
func ConformanceClientScenarios(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return listScenarios(t, ctx, "--client")
}

// clientResultDir matches the directories the CLI writes with -o for a
// client scenario, relative to the output directory: SCENARIO-TIMESTAMP,
// where SCENARIO may hold slashes (auth/metadata-default).
var clientResultDir = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readClientResults parses every checks.json under dir, sorted by scenario.
func readClientResults(dir string) ([]ScenarioResult, error) {
	var out []ScenarioResult
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		m := clientResultDir.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r := ScenarioResult{Scenario: m[1]}
		if err := json.Unmarshal(data, &r.Checks); err != nil {
			return fmt.Errorf("%s/checks.json: %w", rel, err)
		}
		out = append(out, r)
		return nil
	})
	slices.SortFunc(out, func(a, b ScenarioResult) int { return strings.Compare(a.Scenario, b.Scenario) })
	return out, err
}
