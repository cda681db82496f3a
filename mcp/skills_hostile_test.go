package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/skill"
)

// hostileSkillsList is the skills/list answer of hostileSkillsServer.
type hostileSkillsList struct {
	sdk.ResultBase
	Skills []json.RawMessage `json:"skills"`
}

// hostileSkillsServer is a server that declares the skills extension and
// lists entries, one good and the others hostile, and serves files whose
// content may differ from what the entries say.
func hostileSkillsServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "hostile-skills", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{
			Resources:  &sdk.ResourceCapabilities{},
			Extensions: map[string]any{skill.ExtensionID: map[string]any{}},
		},
	})
	bomb := "---\nname: bomb\ndescription: x\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n---\nbody\n"
	files := map[string]string{
		"skill://good/SKILL.md":     "---\nname: good\ndescription: Good.\n---\nDo good.\n",
		"skill://good/notes.md":     "notes",
		"skill://tampered/SKILL.md": "---\nname: tampered\ndescription: Tampered.\n---\nSomething else entirely.\n",
		"skill://bomb/SKILL.md":     bomb,
	}
	entry := func(name string, fm map[string]any, res any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"uri": "skill://" + name + "/SKILL.md", "frontmatter": fm, "resources": res})
		return b
	}
	file := func(uri string, content string) map[string]any {
		return map[string]any{"uri": uri, "digest": skill.Digest([]byte(content)), "size": len(content)}
	}
	fm := func(name string) map[string]any { return map[string]any{"name": name, "description": "x"} }
	many := []any{file("skill://many/SKILL.md", "x")}
	for i := range 10000 {
		many = append(many, file(fmt.Sprintf("skill://many/f%05d", i), ""))
	}
	list := []json.RawMessage{
		entry("good", map[string]any{"name": "good", "description": "Good."}, []any{file("skill://good/SKILL.md", files["skill://good/SKILL.md"]), file("skill://good/notes.md", "notes")}),
		// Listed with the digest of other bytes than it serves.
		entry("tampered", map[string]any{"name": "tampered", "description": "Tampered."}, []any{file("skill://tampered/SKILL.md", "---\nname: tampered\ndescription: Tampered.\n---\nDo as told.\n")}),
		entry("huge", fm("huge"), []any{map[string]any{"uri": "skill://huge/SKILL.md", "digest": skill.Digest(nil), "size": 100 << 20}}),
		entry("many", fm("many"), many),
		entry("escape", fm("escape"), []any{file("skill://escape/SKILL.md", "x"), file("skill://escape/../good/notes.md", "notes")}),
		entry("Bad_Name", fm("Bad_Name"), []any{file("skill://Bad_Name/SKILL.md", "x")}),
		entry("bomb", fm("bomb"), []any{file("skill://bomb/SKILL.md", bomb)}),
		json.RawMessage(`{"uri":"skill://odd/SKILL.md","frontmatter":{"name":"odd","description":"x"},"resources":42}`),
	}
	if err := sdk.AddReceivingCustomMethod(s, "skills/list", func(context.Context, *sdk.ServerSession, *skillsListParams) (*hostileSkillsList, error) {
		return &hostileSkillsList{Skills: list}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for uri, content := range files {
		s.AddResource(&sdk.Resource{URI: uri, Name: uri}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, Text: content}}}, nil
		})
	}
	return testserver.ServeHTTP(t, s, testserver.Stateful).URL
}

// A hostile server of skills: each bad entry (10,000 files, 100 MB, a path
// out of the skill, a bad name, a manifest that is not one) is refused
// alone and named in the log; the good skill is served; a file whose bytes
// differ from its digest, and an alias bomb in a SKILL.md, fail their
// reads without expanding anything.
func TestSkillsServerHostile(t *testing.T) {
	url := hostileSkillsServer(t)
	leakCheck(t)
	var log syncLog
	r := start(t, url, false, OptLogger(log.logger()))
	ctx := context.Background()
	list, err := r.ListSkills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]toolkit.Skill{}
	for _, s := range list {
		byPath[s.Path()] = s
	}
	if len(byPath) != 3 || byPath["good"] == nil || byPath["tampered"] == nil || byPath["bomb"] == nil {
		t.Fatalf("skills %v", byPath)
	}
	for _, want := range []string{"more than 512", "over 16777216 bytes", `skill \"escape\": bad parameter: file path \"../good/notes.md\"`, "Bad_Name", `skill \"skill://odd/SKILL.md\"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
	if body, err := skill.Body(ctx, byPath["good"]); err != nil || body != "Do good.\n" {
		t.Errorf("good: %q %v", body, err)
	}
	if _, err := byPath["tampered"].ReadFile(ctx, skill.FileName); !errors.Is(err, toolkit.ErrIntegrity) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := skill.Body(ctx, byPath["bomb"]); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("bomb: %v", err)
	}
}

// syncLog collects log lines, safe for concurrent use.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *syncLog) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
