package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// demoConfig is what the demo needs from its caller.
type demoConfig struct {
	// out receives the demo's report.
	out io.Writer
	// logger receives diagnostics (stderr).
	logger *slog.Logger
	// serverURL is the stdio URL of an MCP server serving the server-mode
	// toolkit: this program with its hidden subcommand.
	serverURL string
	// model runs prompts; nil to only render them.
	model *openAI
	// readyTimeout bounds the wait for a connector to come up.
	readyTimeout time.Duration
}

// remoteNamespace is the namespace the demo gives the MCP server.
const remoteNamespace = "remote"

// The prompt file the demo seeds its user store with.
const (
	standupFile   = "standup.md"
	standupPrompt = `---
title: Write a stand-up update
description: Turns yesterday's and today's work into a stand-up message.
input:
  type: object
  properties:
    done: {type: string}
    next: {type: string}
---
Write a stand-up update. Yesterday: {{ .done }}. Today: {{ .next }}.
`
)

// standupEdited is the prompt after the demo's edit: a shorter update.
var standupEdited = strings.NewReplacer(
	"title: Write a stand-up update", "title: Write a short stand-up update",
	"into a stand-up message", "into a two-line stand-up message",
	"Write a stand-up update.", "Write a two-line stand-up update.",
).Replace(standupPrompt)

// runDemo walks through the toolkit: builtins, a user store, a real MCP
// server, the aggregate, lookups, calls with progress, prompts, a live edit
// and a clean removal. Its report goes to cfg.out.
func runDemo(ctx context.Context, cfg demoConfig) error {
	out := &console{w: cfg.out}
	seen := newJournal()

	// The user namespace lives in a directory; the demo uses a fresh one
	// seeded with one prompt file.
	userDir, err := os.MkdirTemp("", "toolkit-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(userDir)
	if err := os.WriteFile(filepath.Join(userDir, standupFile), []byte(standupPrompt), 0o644); err != nil {
		return err
	}

	d := &delegate{
		logger:  cfg.logger,
		userDir: userDir,
		model:   cfg.model,
		onEvent: func(ev toolkit.ConnectorEvent) {
			out.Printf("[event] %s in %s\n", ev.Kind, ev.Namespace)
			seen.add("event " + ev.Kind.String() + " " + ev.Namespace)
		},
	}
	prompts, err := builtinPrompts()
	if err != nil {
		return err
	}
	tk, err := toolkit.New(
		toolkit.WithDelegate(d),
		toolkit.WithLogger(cfg.logger),
		toolkit.WithTool(builtinTools()...),
		toolkit.WithPrompt(prompts...),
		toolkit.WithResource(builtinResources()...),
	)
	if err != nil {
		return err
	}
	d.tk = tk
	// The toolkit announces every connector's state changes, under its
	// namespace, to whoever subscribes; the items of a "ready" state are
	// listed by the time it arrives.
	defer tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventStateChange {
			out.Printf("[state] %s: %s\n", ev.Namespace, stateLine(ev.State))
			seen.add("state " + ev.Namespace + " " + ev.State.Status.String())
		}
	})()

	out.Println("toolkit example: one surface over builtins, MCP servers and a user store")
	if cfg.model != nil {
		out.Println("model endpoint:", cfg.model)
	} else {
		out.Printf("no model endpoint (set %s or %s to run prompts): prompts are rendered, not run\n", envBaseURL, envAPIKey)
	}

	// Run keeps the connectors alive. When it returns they are stopped and
	// the server's child process is reaped.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tk.Run(runCtx) }()
	shutdown := sync.OnceValue(func() error {
		stop()
		return <-done
	})
	defer shutdown()
	waitReady := func(ns string) error {
		wctx, cancel := context.WithTimeout(ctx, cfg.readyTimeout)
		defer cancel()
		got, err := seen.wait(wctx, 0, "state "+ns+" ready", "state "+ns+" failed")
		if err != nil {
			return fmt.Errorf("%s did not come up: %w", ns, err)
		}
		if got != "state "+ns+" ready" {
			return fmt.Errorf("%s failed to start (see the log)", ns)
		}
		tk.WaitEvents() // let the list-change events print first
		return nil
	}

	out.Section("1. Builtins, and a user store in a directory")
	if err := waitReady(toolkit.UserNamespace); err != nil {
		return err
	}

	out.Section("2. A real MCP server: this program in server mode, over stdio")
	if err := tk.AddConnectorNS(remoteNamespace, cfg.serverURL); err != nil {
		return err
	}
	if err := waitReady(remoteNamespace); err != nil {
		return err
	}

	out.Section("3. The aggregate")
	var table strings.Builder
	if err := writeConnectors(&table, tk.Connectors()); err != nil {
		return err
	}
	table.WriteString("\n")
	all, err := tk.List(ctx, toolkit.ListRequest{})
	if err != nil {
		return err
	}
	if err := writeItems(&table, all.Items); err != nil {
		return err
	}
	out.Printf("%s", table.String())

	out.Section("4. Lookup, by every key form")
	if err := showLookups(ctx, out, tk); err != nil {
		return err
	}

	out.Section("5. Calls (the remote one reports progress as it goes)")
	// The session in ctx is what tools report to; the console session
	// prints progress. Remote progress arrives as MCP notifications.
	callCtx := toolkit.ContextWithSession(ctx, &consoleSession{out: out, logger: cfg.logger})
	// toolkit.Input hands Go values to a tool as its JSON input.
	for _, c := range []struct {
		key   string
		input any
	}{
		{"word_count", map[string]any{"text": "one surface for every tool"}},
		{"echo", map[string]any{"text": "hello"}},
		{remoteNamespace + ".echo", map[string]any{"text": "hello"}},
		{remoteNamespace + ".countdown", map[string]any{"from": 3}},
	} {
		in := toolkit.Input(c.input)
		out.Printf("call %s %s\n", c.key, textOf(ctx, in))
		res, err := tk.Call(callCtx, c.key, in)
		if err != nil {
			return err
		}
		out.Printf("  result (%s): %s\n", res.Type(), textOf(ctx, res))
	}
	// Input is checked against the tool's schema before the tool runs.
	out.Printf("call word_count {\"txt\":1}\n")
	_, err = tk.Call(callCtx, "word_count", toolkit.Input(map[string]any{"txt": 1}))
	if !errors.Is(err, toolkit.ErrSchema) {
		return fmt.Errorf("bad input was not refused: %v", err)
	}
	out.Printf("  refused: %v\n", err)

	out.Section("6. Prompts")
	if err := showPrompts(callCtx, out, tk); err != nil {
		return err
	}

	out.Section("7. Editing the user store on disk")
	if err := showStoreEdit(ctx, out, tk, seen, userDir, cfg.readyTimeout); err != nil {
		return err
	}

	out.Section("8. Removing the server")
	if err := tk.RemoveConnector(cfg.serverURL); err != nil {
		return err
	}
	tk.WaitEvents()
	left, err := tk.List(ctx, toolkit.ListRequest{Namespace: toolkit.BuiltinNamespace})
	if err != nil {
		return err
	}
	all, err = tk.List(ctx, toolkit.ListRequest{})
	if err != nil {
		return err
	}
	out.Printf("%d items left, %d of them builtin; the server's child process has exited\n", all.Count, left.Count)

	if err := shutdown(); err != nil {
		return err
	}
	out.Println("\ndone")
	return nil
}

// stateLine describes a connector state in one line.
func stateLine(st toolkit.ConnectorState) string {
	s := st.Status.String()
	if st.Status == toolkit.StatusReady && st.Name != "" {
		s += " (" + strings.TrimSpace(st.Name+" "+st.Version) + ")"
	}
	if st.LastError != "" && st.Status != toolkit.StatusReady {
		s += ": " + st.LastError
	}
	return s
}

// showLookups looks items up by each key form and prints what each key
// reaches.
func showLookups(ctx context.Context, out *console, tk *toolkit.Toolkit) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tFORM\tREACHES")
	for _, k := range []struct{ key, form string }{
		{remoteNamespace + ".countdown", "namespace.name"},
		{aboutURI + "#" + remoteNamespace, "uri#namespace"},
		{"echo", "bare name (builtins first)"},
		{"countdown", "bare name"},
		{welcomeURI, "bare URI"},
		{"user.standup", "namespace.name"},
		{"remote.nothing", "namespace.name"},
	} {
		it, err := tk.LookupItem(ctx, k.key)
		reach := ""
		switch {
		case errors.Is(err, toolkit.ErrNotFound):
			reach = "not found"
		case err != nil:
			return err
		default:
			reach = string(it.Type) + " " + it.Key()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.key, k.form, reach)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	out.Printf("%s", b.String())
	return nil
}

// showPrompts renders a markdown prompt and a remote one, then runs a
// prompt through the delegate.
func showPrompts(ctx context.Context, out *console, tk *toolkit.Toolkit) error {
	// A markdown prompt: Prepare renders the template and gathers what a
	// model run needs.
	v, err := tk.Lookup(ctx, "builtin.summarize")
	if err != nil {
		return err
	}
	summarize := v.(*prompt.Agent)
	req, err := summarize.Prepare(ctx, toolkit.Input(map[string]any{"text": "Toolkits gather tools from everywhere.", "points": 2}))
	if err != nil {
		return err
	}
	out.Println("builtin.summarize, prepared for a model:")
	out.Printf("  system: %s\n", req.System)
	out.Printf("  tools:  %s\n", strings.Join(req.Tools, ", "))
	out.Printf("  user:   %s\n", indent(req.User, "          "))

	// A remote prompt renders on its server (prompts/get).
	v, err = tk.Lookup(ctx, remoteNamespace+".greet")
	if err != nil {
		return err
	}
	rendered, err := v.(prompt.Renderer).Render(ctx, json.RawMessage(`{"name":"Ada"}`))
	if err != nil {
		return err
	}
	out.Println(remoteNamespace + ".greet, rendered by the server:")
	for _, m := range rendered.Messages {
		out.Printf("  %s: %s\n", m.Role, textOf(ctx, m.Content))
	}

	// Running a prompt goes through the delegate: with a model endpoint it
	// runs a tool-calling loop with the prompt's allowed tools.
	v, err = tk.Lookup(ctx, "builtin.launch_check")
	if err != nil {
		return err
	}
	allowed, err := tk.PromptTools(ctx, v.(toolkit.Prompt))
	if err != nil {
		return err
	}
	keys := make([]string, len(allowed))
	for i, it := range allowed {
		keys[i] = it.Key()
	}
	out.Printf("builtin.launch_check may use: %s\n", strings.Join(keys, ", "))
	res, err := tk.Call(ctx, v, toolkit.Input(map[string]any{"from": 2}))
	switch {
	case errors.Is(err, toolkit.ErrNotImplemented):
		out.Println("  not run: no model endpoint configured. It would be sent as:")
		req, err := v.(*prompt.Agent).Prepare(ctx, toolkit.Input(map[string]any{"from": 2}))
		if err != nil {
			return err
		}
		out.Printf("  system: %s\n", req.System)
		out.Printf("  user:   %s\n", indent(req.User, "          "))
	case err != nil:
		out.Printf("  the model run failed: %v\n", err)
	default:
		out.Printf("  answer: %s\n", indent(textOf(ctx, res), "          "))
	}
	return nil
}

// showStoreEdit edits the seeded prompt file the way an editor would (a
// new file renamed over the old) and waits for the store to notice.
func showStoreEdit(ctx context.Context, out *console, tk *toolkit.Toolkit, seen *journal, dir string, timeout time.Duration) error {
	title := func() (string, error) {
		v, err := tk.Lookup(ctx, "user.standup")
		if err != nil {
			return "", err
		}
		return v.(toolkit.Prompt).Title(), nil
	}
	before, err := title()
	if err != nil {
		return err
	}
	out.Printf("user.standup is titled %q\n", before)
	out.Println("rewriting " + standupFile + " in the store's directory...")
	mark := seen.mark()
	tmp := filepath.Join(dir, "."+standupFile+".tmp") // hidden: the store ignores it
	if err := os.WriteFile(tmp, []byte(standupEdited), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, standupFile)); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := seen.wait(wctx, mark, "event "+toolkit.ConnectorEventPromptListChanged.String()+" "+toolkit.UserNamespace); err != nil {
		return fmt.Errorf("the edit did not arrive: %w", err)
	}
	after, err := title()
	if err != nil {
		return err
	}
	out.Printf("user.standup is now titled %q\n", after)
	return nil
}

// textOf returns a resource's content as text, for printing.
func textOf(ctx context.Context, r toolkit.Resource) string {
	if r == nil {
		return "(no output)"
	}
	data, err := r.Read(ctx)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if !resource.IsText(r.Type()) && !resource.IsJSON(r.Type()) {
		return fmt.Sprintf("(%d bytes of %s)", len(data), r.Type())
	}
	return strings.TrimSpace(string(data))
}

// indent puts prefix before every line of s but the first (and but the
// empty ones).
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
