package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
)

func TestParsePolicyConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gw.yaml")
	cfg, err := parseConfig(file, []byte(`
policy:
  default: deny
  rules:
    - name: readers
      effect: allow
      annotations: {read_only: true}
    - name: confirm-writes
      effect: ask
      principals: ["jwt:*"]
      namespaces: [fs]
      tools: ["write_*", "move_*"]
      arguments: [{path: /overwrite, equals: true}]
      reason: it overwrites files
rate_limits:
  - {name: per-client, per: principal, rate: 60/m, burst: 10}
  - {per: tool, tools: ["search"], rate: 5/s}
pins_file: pins.json
audit_log:
  file: audit.jsonl
  max_files: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.policyConfig()
	if pc.Default != toolkit.Deny || len(pc.Rules) != 2 || pc.Rules[1].Effect != toolkit.Ask || pc.Rules[1].Arguments[0].Equals != true ||
		*pc.Rules[0].Annotations.ReadOnly != true || len(pc.RateLimits) != 2 || pc.RateLimits[0].Rate != (policy.Rate{Count: 60, Period: time.Minute}) {
		t.Errorf("policy %+v", pc)
	}
	if err := pc.Check(); err != nil {
		t.Error(err)
	}
	if cfg.PinsFile != filepath.Join(dir, "pins.json") {
		t.Errorf("pins_file %q", cfg.PinsFile)
	}
	if a := cfg.AuditLog; a.File != filepath.Join(dir, "audit.jsonl") || a.MaxBytes != defaultAuditBytes || a.MaxFiles != 3 || a.Arguments {
		t.Errorf("audit_log %+v", a)
	}
}

func TestParsePolicyConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"effect", "policy:\n  rules:\n    - effect: permit\n", []string{`gw.yaml:3: policy.rules[0].effect: "permit" is not an effect: use allow, deny or ask`}},
		{"default", "policy:\n  default: maybe\n", []string{`gw.yaml:2: policy.default: "maybe" is not an effect`}},
		{"effect list", "policy:\n  rules:\n    - effect: [deny]\n", []string{`gw.yaml:3: policy.rules[0].effect: cannot use a list as allow, deny or ask`}},
		{"unknown rule field", "policy:\n  rules:\n    - effect: deny\n      toolz: [a]\n", []string{"gw.yaml:4: policy.rules[0].toolz: unknown field (known: name, effect, principals, namespaces, tools, annotations, arguments, reason"}},
		{"bad glob", "policy:\n  rules:\n    - name: x\n      effect: deny\n      tools: ['a\\']\n", []string{`gw.yaml:3: policy.rules[0]: tools[0]: pattern "a\\" ends with an escape`}},
		{"bad pointer", "policy:\n  rules:\n    - effect: deny\n      arguments: [{path: mode, equals: x}]\n", []string{`gw.yaml:3: policy.rules[0]: arguments[0]: path: JSON Pointer "mode" must be empty or start with /`}},
		{"two tests", "policy:\n  rules:\n    - effect: deny\n      arguments: [{path: /a, equals: x, present: true}]\n", []string{"gw.yaml:3: policy.rules[0]: arguments[0]: give one of equals, matches and present (2 given)"}},
		{"duplicate rule", "policy:\n  rules:\n    - {name: a, effect: deny}\n    - {name: a, effect: allow}\n", []string{`gw.yaml:4: policy.rules[1].name: "a" is already the name of policy.rules[0]`}},
		{"annotation type", "policy:\n  rules:\n    - effect: deny\n      annotations: {destructive: often}\n", []string{`gw.yaml:4: policy.rules[0].annotations.destructive: cannot use "often" as true or false`}},
		{"rate", "rate_limits:\n  - rate: 10 per second\n", []string{`gw.yaml:2: rate_limits[0].rate: rate "10 per second": write it N/period`}},
		{"no rate", "rate_limits:\n  - per: principal\n", []string{"gw.yaml:2: rate_limits[0]: rate: missing or out of range"}},
		{"per", "rate_limits:\n  - {per: everyone, rate: 1/s}\n", []string{`gw.yaml:2: rate_limits[0]: per "everyone": use principal, tool, principal_tool or all`}},
		{"pins dir", "pins_file: nowhere/pins.json\n", []string{"gw.yaml:1: pins_file: the directory of ", "does not exist"}},
		{"audit file", "audit_log: {max_files: 2}\n", []string{"gw.yaml:1: audit_log.file: missing"}},
		{"audit size", "audit_log: {file: a.log, max_bytes: 10}\n", []string{"gw.yaml:1: audit_log.max_bytes: 10 is out of range"}},
		{"audit files", "audit_log: {file: a.log, max_files: -1}\n", []string{"gw.yaml:1: audit_log.max_files: -1 is out of range"}},
		{"audit scalar", "audit_log: audit.jsonl\n", []string{`gw.yaml:1: audit_log: cannot use "audit.jsonl" as a mapping of fields`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("gw.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRotatingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	r, err := openRotating(path, 100, 2, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 39) + "\n") // 40 bytes: two per file
	for range 7 {
		if _, err := r.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	// 7 lines: FILE holds the 7th, FILE.1 the 5th and 6th, FILE.2 the
	// 3rd and 4th; the first two went with the oldest file.
	sizes := map[string]int64{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := e.Info()
		sizes[e.Name()] = fi.Size()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", e.Name(), fi.Mode())
		}
	}
	if len(sizes) != 3 || sizes["audit.jsonl"] != 40 || sizes["audit.jsonl.1"] != 80 || sizes["audit.jsonl.2"] != 80 {
		t.Errorf("files %v", sizes)
	}
	// A record larger than the limit gets a file of its own, whole.
	big := []byte(strings.Repeat("y", 150) + "\n")
	if _, err := r.Write(big); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != string(big) {
		t.Errorf("the big record was split: %q", data)
	}
	mustClose(t, r)
	if _, err := r.Write(line); err == nil {
		t.Error("a write after Close succeeded")
	}
	// Reopening appends and counts what is there.
	r, err = openRotating(path, 150, 2, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	r.Write(line)
	if data, _ := os.ReadFile(path); len(data) != 40 {
		t.Errorf("after reopening: %d bytes, want the big record rotated out and one line", len(data))
	}
	mustClose(t, r)
}

func TestRotatingFileConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	r, err := openRotating(path, 4096, 1000, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 500
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				r.Write([]byte(strings.Repeat(string(rune('a'+w)), 20+i%30) + "\n"))
			}
		}()
	}
	for range writers {
		<-done
	}
	mustClose(t, r)
	lines := 0
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 4096 {
			t.Errorf("%s holds %d bytes", e.Name(), len(data))
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l == "" || strings.Trim(l, l[:1]) != "" {
				t.Fatalf("%s: a mixed or empty line %q", e.Name(), l)
			}
			lines++
		}
	}
	if lines != writers*each {
		t.Errorf("%d lines, want %d", lines, writers*each)
	}
}

func mustClose(t *testing.T, r *rotatingFile) {
	t.Helper()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSamplePolicyConfig checks that the policy sections commented out in
// gateway.yaml are valid once uncommented.
func TestSamplePolicyConfig(t *testing.T) {
	data, err := os.ReadFile("gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start, end := strings.Index(text, "# Policy:"), strings.Index(text, "\nservers:")
	if start < 0 || end < start {
		t.Fatal("gateway.yaml has no policy section before servers")
	}
	var yaml []string
	for line := range strings.SplitSeq(text[start:end], "\n") {
		for _, key := range []string{"policy:", "rate_limits:", "pins_file:", "audit_log:"} {
			if strings.HasPrefix(line, "# "+key) {
				yaml = append(yaml, strings.TrimPrefix(line, "# "))
			}
		}
		if strings.HasPrefix(line, "#   ") {
			yaml = append(yaml, strings.TrimPrefix(line, "# "))
		}
	}
	dir := t.TempDir()
	cfg, err := parseConfig(filepath.Join(dir, "gateway.yaml"), []byte(strings.Join(yaml, "\n")))
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(yaml, "\n"))
	}
	if len(cfg.Policy.Rules) != 3 || len(cfg.RateLimits) != 2 || cfg.PinsFile == "" || cfg.AuditLog == nil {
		t.Errorf("the sample gives %d rules, %d limits, pins %q, audit %v", len(cfg.Policy.Rules), len(cfg.RateLimits), cfg.PinsFile, cfg.AuditLog)
	}
}

// TestGatewayRefusesALinkedPinsFile: a pins file that is a symbolic link
// (to approvals kept elsewhere) stops the gateway from starting, and
// "pins approve" from writing through it.
func TestGatewayRefusesALinkedPinsFile(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere.json")
	if err := os.WriteFile(elsewhere, []byte(`{"version":1,"pins":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "pins.json")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte("pins_file: pins.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := newPolicyEngine(t.Context(), cfg, nil, slog.New(slog.DiscardHandler), nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("an engine over a linked pins file: %v", err)
	}
	config := filepath.Join(dir, "gw.yaml")
	if err := os.WriteFile(config, []byte("pins_file: pins.json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if err := pinsCommand(t.Context(), []string{"approve", "--config", config, "--all"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("pins approve through a link: %v", err)
	}
	if data, _ := os.ReadFile(elsewhere); string(data) != `{"version":1,"pins":[]}` {
		t.Errorf("the link's target was written: %s", data)
	}
}
