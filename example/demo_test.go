package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit/mcp"
)

// demoLines are lines (regular expressions) the demo must print.
var demoLines = []string{
	`^\[state\] user: ready \(store\)$`,
	`^\[state\] remote: connecting$`,
	`^\[state\] remote: ready \(example-server 0\.1\.0\)$`,
	`^\[event\] tool_list_changed in remote$`,
	// the aggregate
	`^remote +ready +example-server 0\.1\.0$`,
	`^builtin +tool +word_count +Counts the words`,
	`^remote +tool +countdown +Counts down`,
	`^remote +tool +echo `,
	`^builtin +prompt +summarize +Summarize a text`,
	`^remote +prompt +greet +Greet someone by name$`,
	`^user +prompt +standup +Write a stand-up update$`,
	`^builtin +resource +example://demo/welcome +A short welcome text$`,
	`^remote +resource +example://server/about +What this server is$`,
	// lookups by every key form
	`^remote\.countdown +namespace\.name +tool remote\.countdown$`,
	`^example://server/about#remote +uri#namespace +resource example://server/about#remote$`,
	`^echo +bare name \(builtins first\) +tool builtin\.echo$`,
	`^countdown +bare name +tool remote\.countdown$`,
	`^example://demo/welcome +bare URI +resource example://demo/welcome#builtin$`,
	`^remote\.nothing +namespace\.name +not found$`,
	// calls, with the remote progress
	`^  result \(application/json\): \{"words":5,"lines":1,"runes":26\}$`,
	`^  result \(text/plain; charset=utf-8\): hello$`,
	`^  result \(text/plain; charset=utf-8\): example-server says: hello$`,
	`^  progress 1/3: 3\.\.\.$`,
	`^  progress 2/3: 2\.\.\.$`,
	`^  progress 3/3: 1\.\.\.$`,
	`^  result \(text/plain; charset=utf-8\): liftoff$`,
	`^  refused: schema violation: tool "word_count": input: .*"txt"`,
	// prompts
	`^  tools:  word_count$`,
	`^          it in 2 bullet points\.$`,
	`^  user: Say hello to Ada on behalf of the example server, in one sentence\.$`,
	`^builtin\.launch_check may use: remote\.countdown, remote\.whoami$`,
	`^  not run: no model endpoint configured`,
	// the store edit, and the removal
	`^user\.standup is titled "Write a stand-up update"$`,
	`^\[event\] prompt_list_changed in user$`,
	`^user\.standup is now titled "Write a short stand-up update"$`,
	`^\[state\] remote: stopped$`,
	`^6 items left, 5 of them builtin`,
	`^done$`,
}

func checkDemoOutput(t *testing.T, out, bin string) {
	t.Helper()
	for _, want := range demoLines {
		if !regexp.MustCompile(`(?m)` + want).MatchString(out) {
			t.Errorf("the output has no line matching %s", want)
		}
	}
	// Progress is printed while the call runs, before its result.
	if p, r := strings.Index(out, "progress 3/3"), strings.Index(out, "liftoff"); p < 0 || r < p {
		t.Errorf("progress not printed before the result")
	}
	if strings.Contains(out, os.TempDir()+"/") || strings.Contains(out, bin) {
		t.Errorf("the output shows a temporary path")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestDemo(t *testing.T) {
	bin := exampleProgram(t)
	var out syncBuffer
	url := (&mcp.StdioCommand{Path: bin, Args: []string{serverSubcommand}}).String()
	err := runDemo(context.Background(), demoConfig{
		out:          &out,
		logger:       testLogger(t),
		serverURL:    url,
		readyTimeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("demo: %v\noutput:\n%s", err, out.String())
	}
	checkDemoOutput(t, out.String(), bin)
}

// TestDemoProgram runs the demo as the program itself, as `go run
// ./example` does, to check the command line and the server it starts.
func TestDemoProgram(t *testing.T) {
	bin := exampleProgram(t)
	cmd := exec.Command(bin)
	cmd.Env = environWithout("OPENAI_")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	checkDemoOutput(t, stdout.String(), bin)
	if s := stderr.String(); s != "" {
		t.Errorf("unexpected log output:\n%s", s)
	}
}

func TestDemoServerFails(t *testing.T) {
	url := (&mcp.StdioCommand{Path: "/nonexistent/example", Args: []string{serverSubcommand}}).String()
	var out syncBuffer
	err := runDemo(context.Background(), demoConfig{out: &out, logger: testLogger(t), serverURL: url, readyTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "remote failed to start") {
		t.Fatalf("err = %v, want the server's failure", err)
	}
}
