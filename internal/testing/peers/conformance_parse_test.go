package peers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseScenarioList(t *testing.T) {
	out := "Server scenarios (test against a server):\n" +
		"  - server-initialize [2025-06-18,2025-11-25]\n" +
		"  - json-schema-2020-12 [2025-11-25]\n" +
		"  - ping\n" +
		"\n" +
		"not a scenario line\n"
	got := parseScenarioList(out)
	want := []string{"server-initialize", "json-schema-2020-12", "ping"}
	if !slices.Equal(got, want) {
		t.Fatalf("parseScenarioList = %q, want %q", got, want)
	}
	if got := parseScenarioList(""); len(got) != 0 {
		t.Fatalf("parseScenarioList(\"\") = %q, want none", got)
	}
}

func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "server-tools-call-image-2026-11-22T02-09-14-258Z", "checks.json"),
		`[{"id":"tools-call-image","name":"ToolsCallImage","status":"FAILURE","errorMessage":"No image content found","details":{"hasData":false}}]`)
	write(t, filepath.Join(dir, "server-ping-2026-11-22T02-09-13-900Z", "checks.json"),
		`[{"id":"ping","name":"Ping","status":"SUCCESS"}]`)
	write(t, filepath.Join(dir, "server-dns-rebinding-protection-2026-11-22T02-09-15-326Z", "checks.json"),
		`[{"id":"a","status":"SUCCESS"},{"id":"b","status":"WARNING"}]`)
	write(t, filepath.Join(dir, "server-empty-2026-11-22T02-09-15-326Z", "checks.json"), `[]`)
	write(t, filepath.Join(dir, "unrelated", "checks.json"), `not json`)
	write(t, filepath.Join(dir, "server-file-2026-11-22T02-09-15-326Z"), `a file, not a directory`)

	got, err := readResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Scenario)
	}
	if want := []string{"dns-rebinding-protection", "empty", "ping", "tools-call-image"}; !slices.Equal(names, want) {
		t.Fatalf("scenarios = %q, want %q", names, want)
	}
	res := &ConformanceResult{Scenarios: got}
	tests := []struct {
		scenario string
		passed   bool
		failures int
	}{
		{"dns-rebinding-protection", true, 0}, // a warning is not a failure
		{"empty", false, 0},                   // no checks ran
		{"ping", true, 0},
		{"tools-call-image", false, 1},
	}
	for _, tt := range tests {
		r, ok := res.Scenario(tt.scenario)
		if !ok {
			t.Fatalf("Scenario(%q) not found", tt.scenario)
		}
		if r.Passed() != tt.passed || len(r.Failures()) != tt.failures {
			t.Errorf("%s: Passed = %v, Failures = %q; want %v and %d failures", tt.scenario, r.Passed(), r.Failures(), tt.passed, tt.failures)
		}
	}
	if _, ok := res.Scenario("nope"); ok {
		t.Error("Scenario(nope) found, want not found")
	}
	if r, _ := res.Scenario("tools-call-image"); r.Failures()[0] != "tools-call-image: No image content found" {
		t.Errorf("failure text = %q", r.Failures()[0])
	}

	bad := t.TempDir()
	write(t, filepath.Join(bad, "server-ping-2026-11-22T02-09-13-900Z", "checks.json"), `{`)
	if _, err := readResults(bad); err == nil {
		t.Error("readResults with malformed checks.json = nil error, want one")
	}
	missing := t.TempDir()
	if err := os.Mkdir(filepath.Join(missing, "server-ping-2026-11-22T02-09-13-900Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := readResults(missing); err == nil {
		t.Error("readResults without checks.json = nil error, want one")
	}
}

func FuzzParseScenarioList(f *testing.F) {
	f.Add("Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  - ping\n")
	f.Add("- \n-  \n - a b c\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		for _, name := range parseScenarioList(out) {
			if name == "" || strings.ContainsAny(name, " \t\r\n") {
				t.Fatalf("name %q from %q", name, out)
			}
		}
	})
}
