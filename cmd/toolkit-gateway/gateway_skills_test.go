package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/skill"
)

type listSkillsParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	sdk.ResultBase
	Skills []skill.Entry `json:"skills"`
}

// gatewaySkills lists the skills a client of the gateway sees, by URI to
// description.
func gatewaySkills(t *testing.T, cs *sdk.ClientSession) map[string]string {
	t.Helper()
	res, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](context.Background(), cs, "skills/list", &listSkillsParams{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range res.Skills {
		out[e.URI], _ = e.Frontmatter["description"].(string)
	}
	return out
}

func writeSkill(t *testing.T, dir, name, desc string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: " + desc + "\n---\nFollow " + name + ".\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The skills key: the gateway serves a directory of skills, to clients of
// both protocol generations, and a skill added while they are connected
// is in their next skills/list.
func TestGatewaySkills(t *testing.T) {
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	writeSkill(t, skills, "pdf", "Handles PDFs.")
	config := writeConfig(t, dir, "listen: 127.0.0.1:0\nskills: skills\n")
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("skills"))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
		sdk.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, "skills/list")
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, ok := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]; !ok {
			t.Errorf("%s: the skills extension is not declared", version)
		}
		if got := gatewaySkills(t, cs); got["skill://skills/pdf/SKILL.md"] != "Handles PDFs." {
			t.Fatalf("%s: skills %v", version, got)
		}
		res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "skill://skills/pdf/SKILL.md"})
		if err != nil || !strings.Contains(res.Contents[0].Text, "Follow pdf.") {
			t.Fatalf("%s: read: %v %v", version, res, err)
		}
		from := g.mark()
		writeSkill(t, skills, "notes-"+strings.ReplaceAll(version, "-", ""), "Takes notes.")
		g.waitLog(t, from, func(r map[string]any) bool {
			return r["msg"] == "toolkit event" && r["kind"] == float64(toolkit.ConnectorEventSkillListChanged)
		})
		if got := gatewaySkills(t, cs); got["skill://skills/notes-"+strings.ReplaceAll(version, "-", "")+"/SKILL.md"] != "Takes notes." {
			t.Fatalf("%s: after the add: %v", version, got)
		}
	}
}

// A skills key that is not a directory is refused at its line.
func TestGatewaySkillsBadConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeConfig(t, dir, "listen: 127.0.0.1:0\nskills: nowhere\n")
	cmd := exec.Command(gatewayProgram(t), "serve", "--config", config)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("the gateway started")
	}
	if want := config + ":2: skills: " + filepath.Join(dir, "nowhere") + " is not a directory"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// The gateway program in front of a server of skills written with the
// Skills extension SDK (tools/peers/skillsserver.mjs, over stdio): its
// clients of both protocol generations see the upstream's skills under
// its namespace beside the skills directory's, and read them; a policy
// rule on "skill:<path>" hides and refuses one, and the rule check finds
// the skill it names.
func TestGatewayUpstreamSkills(t *testing.T) {
	dir := t.TempDir()
	upstream := filepath.Join(dir, "upstream")
	writeSkill(t, filepath.Join(upstream, "acme"), "refunds", "Refunds orders.")
	writeSkill(t, filepath.Join(upstream, "acme"), "secret", "Secret.")
	writeSkill(t, filepath.Join(dir, "skills"), "pdf", "Handles PDFs.")
	node, argv := peers.SkillsServerStdio(t, upstream)
	command, _ := json.Marshal(append([]string{node}, argv...))
	config := writeConfig(t, dir, fmt.Sprintf("listen: 127.0.0.1:0\nskills: skills\npolicy:\n  rules:\n    - name: no-secret\n      effect: deny\n      namespaces: [up]\n      tools: [\"skill:acme/secret\"]\nservers:\n  - name: up\n    command: %s\n    timeouts: {connect: 60s}\n", command))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))
	g.waitLog(t, 0, upstreamReady("skills"))
	if r := g.waitLog(t, 0, func(r map[string]any) bool { return r["msg"] == "policy rules checked against the upstreams' tools" }); r["unmatched"] != float64(0) {
		t.Errorf("the rule check: %v", r)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
		sdk.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, "skills/list")
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		got := gatewaySkills(t, cs)
		if len(got) != 2 || got["skill://up/acme/refunds/SKILL.md"] != "Refunds orders." || got["skill://skills/pdf/SKILL.md"] != "Handles PDFs." {
			t.Fatalf("%s: skills %v", version, got)
		}
		if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "skill://up/acme/secret/SKILL.md"}); err == nil {
			t.Errorf("%s: read a skill the policy denies", version)
		}
		res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "skill://up/acme/refunds/SKILL.md"})
		if err != nil || !strings.Contains(res.Contents[0].Text, "Follow refunds.") {
			t.Fatalf("%s: read: %v %v", version, res, err)
		}
	}
}
