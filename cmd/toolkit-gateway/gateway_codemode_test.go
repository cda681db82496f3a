package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmkit/toolkit/codemode"
	"github.com/llmkit/toolkit/internal/testing/peers"
)

func TestConfigCodeMode(t *testing.T) {
	cfg, err := parseConfig("gw.yaml", []byte("code_mode:\n  timeout: 5s\n  max_tool_calls: 20\n  max_parallel_calls: 8\n  memory_mb: 64\n  warm_workers: {max: 8, per_principal: 2, idle: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cm := cfg.CodeMode; cm == nil || cm.Timeout.Seconds() != 5 || cm.MaxToolCalls != 20 || cm.MaxParallelCalls != 8 || cm.MemoryMB != 64 || cm.InProcess ||
		cm.WarmWorkers.warm() != (codemode.Warm{Max: 8, PerPrincipal: 2, Idle: time.Minute}) {
		t.Errorf("code_mode = %+v", cfg.CodeMode)
	}
	for yaml, want := range map[string]codemode.Warm{
		"code_mode: {}\n":                           {Max: 1},
		"code_mode:\n  warm_workers: {max: 0}\n":    {},
		"code_mode:\n  warm_workers: {idle: 10s}\n": {Max: 1, Idle: 10 * time.Second},
	} {
		if cfg, err := parseConfig("gw.yaml", []byte(yaml)); err != nil || cfg.CodeMode.WarmWorkers.warm() != want {
			t.Errorf("%q: %+v, %v, want %+v", yaml, cfg.CodeMode, err, want)
		}
	}
	if cfg, err := parseConfig("gw.yaml", []byte("code_mode: {}\n")); err != nil || cfg.CodeMode == nil {
		t.Errorf("empty code_mode: %+v, %v", cfg, err)
	}
	for yaml, want := range map[string]string{
		"code_mode:\n  timeout: 1h\n":                       "gw.yaml:2: code_mode.timeout: 1h0m0s is out of range",
		"code_mode:\n  max_tool_calls: -1\n":                "gw.yaml:2: code_mode.max_tool_calls: -1 is out of range",
		"code_mode:\n  max_output: 1000000000\n":            "gw.yaml:2: code_mode.max_output: 1000000000 is out of range",
		"code_mode:\n  memory_mb: 4\n":                      "gw.yaml:2: code_mode.memory_mb: 4 is too small",
		"code_mode:\n  memroy_mb: 4\n":                      "gw.yaml:2: code_mode.memroy_mb: unknown field (known: timeout, max_tool_calls, max_parallel_calls, max_output, memory_mb, in_process, warm_workers)",
		"code_mode:\n  warm_workers: {max: 1000}\n":         "gw.yaml:2: code_mode.warm_workers.max: 1000 is out of range",
		"code_mode:\n  warm_workers: {per_principal: -1}\n": "gw.yaml:2: code_mode.warm_workers.per_principal: -1 is out of range",
		"code_mode:\n  warm_workers: {idle: 48h}\n":         "gw.yaml:2: code_mode.warm_workers.idle: 48h0m0s is out of range",
		"code_mode:\n  warm_workers: {maks: 1}\n":           "gw.yaml:2: code_mode.warm_workers.maks: unknown field (known: max, per_principal, idle)",
		"code_mode:\n  max_parallel_calls: 65\n":            "gw.yaml:2: code_mode.max_parallel_calls: 65 is out of range",
		"code_mode:\n  timeout: soon\n":                     "gw.yaml:2: code_mode.timeout: cannot use",
		"code_mode: yes\n":                                  "gw.yaml:1: code_mode: cannot use",
	} {
		if _, err := parseConfig("gw.yaml", []byte(yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yaml, err, want)
		}
	}
	var none *CodeMode
	two := 2
	if none.String() != "" || (&CodeMode{MemoryMB: 20}).String() == (&CodeMode{MemoryMB: 30}).String() ||
		(&CodeMode{}).String() == (&CodeMode{WarmWorkers: &WarmWorkers{Max: &two}}).String() {
		t.Error("String does not tell configurations apart")
	}
}

// TestGatewayCodeModeFilesystem runs the gateway with code_mode and
// tool_search in front of the reference filesystem server: a client
// lists the meta-tools and code mode's two tools, reads the declarations
// of the tools a search finds, and runs one script that lists a
// directory, reads the text files it needs and returns a summary; a
// script's call of a tool the policy denies is an exception it catches;
// a script that allocates without end fails alone (its worker process),
// and the gateway goes on. The audit has one record per inner call, each
// naming the run_code call as its parent.
func TestGatewayCodeModeFilesystem(t *testing.T) {
	node, args := peers.FilesystemStdio(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"a.txt": "alpha beta gamma", "b.txt": "one two", "c.txt": strings.Repeat("word ", 1000), "image.bin": "\x00\x01",
	} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	command, _ := json.Marshal(append(append([]string{node}, args...), data))
	config := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
audit_log: {file: audit.jsonl}
tool_search: {}
code_mode:
  timeout: 20s
  memory_mb: 64
  warm_workers: {max: 2, per_principal: 2}
policy:
  rules:
    - {name: read-only, effect: deny, tools: [write_file, edit_file, move_file, create_directory]}
servers:
  - name: fs
    command: %s
`, command))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("fs"))
	cs := connectGateway(t, g)

	want := []string{"call_tool", codemode.DeclareToolsName, "describe_tools", codemode.RunCodeName, "search_tools"}
	if got := toolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	decl, isErr := toolText(t, cs, codemode.DeclareToolsName, map[string]any{"names": []string{"list_directory", "read_text_file", "write_file"}})
	if isErr || !strings.Contains(decl, "list_directory(args: {") || !strings.Contains(decl, "read_text_file(args: {") ||
		strings.Contains(decl, "write_file(") || !strings.Contains(decl, `// unknown tools: ["write_file"]`) {
		t.Fatalf("declarations (isError %v):\n%s", isErr, decl)
	}

	script := fmt.Sprintf(`
const dir = %q;
const text = r => typeof r === "string" ? r : (r.content ?? JSON.stringify(r));
const listing = text(await tools.list_directory({path: dir}));
const names = listing.split("\n").filter(l => l.startsWith("[FILE]") && l.endsWith(".txt")).map(l => l.slice(7).trim());
const words = {};
for (const n of names) words[n] = text(await tools.read_text_file({path: dir + "/" + n})).split(/\s+/).filter(Boolean).length;
return {files: names.length, words};`, data)
	var summary struct {
		Files int            `json:"files"`
		Words map[string]int `json:"words"`
	}
	callJSON(t, cs, codemode.RunCodeName, map[string]any{"code": script}, &summary)
	if summary.Files != 3 || summary.Words["a.txt"] != 3 || summary.Words["b.txt"] != 2 || summary.Words["c.txt"] != 1000 {
		t.Fatalf("summary %+v", summary)
	}

	var denied map[string]string
	callJSON(t, cs, codemode.RunCodeName, map[string]any{"code": fmt.Sprintf(`
try { await tools.write_file({path: %q, content: "x"}); return {wrote: "yes"} }
catch (e) { return {name: e.name, tool: e.tool, outcome: e.outcome} }`, filepath.Join(data, "new.txt"))}, &denied)
	if denied["name"] != "ToolError" || denied["tool"] != "write_file" || denied["outcome"] != "denied" {
		t.Fatalf("denied call: %v", denied)
	}
	if _, err := os.Stat(filepath.Join(data, "new.txt")); err == nil {
		t.Fatal("the denied call wrote the file")
	}

	// Runaway allocation fails its script alone.
	text, isErr := toolText(t, cs, codemode.RunCodeName, map[string]any{"code": `let s = "ab"; for (;;) s += s`})
	if !isErr || !strings.Contains(text, "memory bound") {
		t.Fatalf("runaway allocation: %q (isError %v)", text, isErr)
	}
	callJSON(t, cs, codemode.RunCodeName, map[string]any{"code": script}, &summary)

	// The workers waiting for the principal's next scripts
	// (warm_workers) are the gateway re-executed, and stop with it. Two
	// waited before the last script, which took one; the one started
	// once it ended, and the one it ran in, being reaped, may be there
	// too.
	workers := childrenNamed(t, g.cmd.Process.Pid, filepath.Base(g.cmd.Path))
	if len(workers) < 1 || len(workers) > 3 {
		t.Errorf("%d workers, want the one that waits, and at most the last script's and the one started after it", len(workers))
	}
	cs.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
	for _, pid := range workers {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d is still there after the gateway exited (kill -0: %v)", pid, err)
		}
	}
	recs, _ := readAudit(t, filepath.Join(dir, "audit.jsonl"))
	runs := map[any]bool{}
	for _, r := range recs {
		if r["tool"] == codemode.RunCodeName {
			runs[r["call"]] = true
		}
	}
	var inner []string
	for _, r := range recs {
		if r["namespace"] != "fs" {
			continue
		}
		if !runs[r["parent"]] {
			t.Errorf("inner record without its run_code parent: %v", r)
		}
		inner = append(inner, fmt.Sprintf("%v/%v", r["tool"], r["outcome"]))
	}
	wantInner := []string{"list_directory/ok", "read_text_file/ok", "read_text_file/ok", "read_text_file/ok", "write_file/denied",
		"list_directory/ok", "read_text_file/ok", "read_text_file/ok", "read_text_file/ok"}
	if !slices.Equal(inner, wantInner) {
		t.Errorf("inner calls audited %v, want %v", inner, wantInner)
	}
}

// childrenNamed returns the pids of the processes whose parent is ppid
// and whose command name is name (cut to the 15 bytes /proc keeps).
func childrenNamed(t *testing.T, ppid int, name string) []int {
	t.Helper()
	if len(name) > 15 {
		name = name[:15]
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		var pid, parent int
		var state string
		fmt.Sscan(s[:open], &pid)
		fmt.Sscan(s[closing+1:], &state, &parent)
		if parent == ppid && s[open+1:closing] == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestGatewayCodeModeEverything runs the gateway with code_mode in
// process in front of the reference "everything" server, whose tool
// names are not identifiers: the declarations quote them, one script
// adds, reads structured content (kept as an object) and catches the
// denial of a tool the policy refuses; a change of code_mode on reload
// is refused until a restart.
func TestGatewayCodeModeEverything(t *testing.T) {
	node, args := peers.EverythingStdio(t)
	dir := t.TempDir()
	command, _ := json.Marshal(append([]string{node}, args...))
	text := fmt.Sprintf(`listen: 127.0.0.1:0
code_mode:
  in_process: true
  timeout: 20s
policy:
  rules:
    - {name: no-env, effect: deny, tools: [get-env]}
servers:
  - name: everything
    command: %s
`, command)
	g := startGateway(t, writeConfig(t, dir, text))
	g.waitLog(t, 0, upstreamReady("everything"))
	cs := connectGateway(t, g)

	decl, isErr := toolText(t, cs, codemode.DeclareToolsName, map[string]any{"names": []string{"get-sum", "get-structured-content"}})
	if isErr || !strings.Contains(decl, `"get-sum"(args: {`) || !strings.Contains(decl, `location: "New York" | "Chicago" | "Los Angeles";`) ||
		!strings.Contains(decl, "/** Temperature in celsius */") {
		t.Fatalf("declarations (isError %v):\n%s", isErr, decl)
	}
	var got struct {
		Sum     string `json:"sum"`
		Weather struct {
			Temperature float64 `json:"temperature"`
			Conditions  string  `json:"conditions"`
		} `json:"weather"`
		Env string `json:"env"`
	}
	callJSON(t, cs, codemode.RunCodeName, map[string]any{"code": `
const sum = await tools["get-sum"]({a: 2, b: 3});
const weather = await tools["get-structured-content"]({location: "New York"});
let env;
try { await tools["get-env"]({}); env = "read" } catch (e) { env = e.outcome }
return {sum, weather, env};`}, &got)
	if got.Sum != "The sum of 2 and 3 is 5." || got.Weather.Temperature != 33 || got.Weather.Conditions != "Cloudy" || got.Env != "denied" {
		t.Fatalf("script result %+v", got)
	}

	// Changing code_mode needs a restart: the reload says so.
	writeConfig(t, dir, strings.Replace(text, "timeout: 20s", "timeout: 10s", 1))
	mark := g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	g.waitLog(t, mark, func(r map[string]any) bool {
		return r["msg"] == "configuration change needs a restart; ignored" && r["field"] == "code_mode"
	})
	cs.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
}

// TestGatewayCodeModeQualifiedNames runs the gateway with code_mode and
// qualified_names in front of the reference "everything" server: the
// names declare_tools gives, by name and by query, are the names the
// client lists, and a script calls the tools by them (in a worker); a
// name the client does not see (the model name) is unknown to scripts.
func TestGatewayCodeModeQualifiedNames(t *testing.T) {
	node, args := peers.EverythingStdio(t)
	dir := t.TempDir()
	command, _ := json.Marshal(append([]string{node}, args...))
	g := startGateway(t, writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
qualified_names: true
code_mode:
  timeout: 20s
servers:
  - name: everything
    command: %s
`, command)))
	g.waitLog(t, 0, upstreamReady("everything"))
	cs := connectGateway(t, g)

	listed := toolNames(t, cs)
	runCode, declare := "builtin_"+codemode.RunCodeName, "builtin_"+codemode.DeclareToolsName
	if !slices.Contains(listed, runCode) || !slices.Contains(listed, declare) || !slices.Contains(listed, "everything_get-sum") {
		t.Fatalf("tools = %v", listed)
	}
	decl, isErr := toolText(t, cs, declare, map[string]any{"names": []string{"everything_get-sum", "get-sum"}, "query": "echo a message back", "limit": 3})
	if isErr || !strings.Contains(decl, `"everything_get-sum"(args: {`) || !strings.Contains(decl, `// unknown tools: ["get-sum"]`) {
		t.Fatalf("declarations (isError %v):\n%s", isErr, decl)
	}
	declared := regexp.MustCompile(`(?m)^  "?([A-Za-z0-9_.-]+)"?\(args:`).FindAllStringSubmatch(decl, -1)
	if len(declared) < 2 {
		t.Fatalf("declarations:\n%s", decl)
	}
	for _, d := range declared {
		if !slices.Contains(listed, d[1]) {
			t.Errorf("declared %q, which the client does not list (%v)", d[1], listed)
		}
	}
	var got struct {
		Sum  string `json:"sum"`
		Echo string `json:"echo"`
		Bare string `json:"bare"`
	}
	callJSON(t, cs, runCode, map[string]any{"code": `
const sum = await tools["everything_get-sum"]({a: 2, b: 3});
const echo = await tools.everything_echo({message: "hi"});
let bare;
try { await tools["get-sum"]({a: 1, b: 1}); bare = "called" } catch (e) { bare = e.outcome }
return {sum, echo, bare};`}, &got)
	if got.Sum != "The sum of 2 and 3 is 5." || !strings.Contains(got.Echo, "hi") || got.Bare != "not_found" {
		t.Fatalf("script result %+v", got)
	}
	cs.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
}
