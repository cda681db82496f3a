package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/skill"
)

func testSkill(t *testing.T, name, desc, body string, files map[string][]byte) toolkit.Skill {
	t.Helper()
	s, err := skill.New([]byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), files)
	mustNotErr(t, err)
	return s
}

// skillsClient is a go-sdk client that can send the skills methods, with
// the options opts (nil for none).
func skillsClient(opts ...*sdk.ClientOptions) *sdk.Client {
	var o *sdk.ClientOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "skills-client", Version: "1"}, o)
	sdk.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](c, methodSkillsList)
	sdk.AddSendingCustomMethod[*getSkillParams, *getSkillResult](c, methodSkillsGet)
	sdk.AddSendingCustomMethod[*readDirectoryParams, *readDirectoryResult](c, methodDirectoryRead)
	return c
}

// The server face declares the skills extension and serves skills/list,
// skills/get, the skill files and directory reads, to clients of both
// protocol generations; the policy hides and refuses skills, and the
// audit records every read.
func TestServeSkills(t *testing.T) {
	leakCheck(t)
	var audit syncBuffer
	policy := toolkit.PolicyFunc(func(_ context.Context, req toolkit.PolicyRequest) toolkit.Decision {
		if req.Tool.Name() == "skill:hidden" {
			return toolkit.Decision{Effect: toolkit.Deny, Rule: "hide"}
		}
		return toolkit.Decision{Effect: toolkit.Allow}
	})
	pdf := testSkill(t, "pdf", "Handles PDF files.", "Pick a template from templates/.\n", map[string][]byte{
		"templates/invoice.md": []byte("invoice"), "templates/regional/eu.md": []byte("eu"), "logo.bin": {0xff, 0xfe},
	})
	f := newFixture(t, []toolkit.Option{
		toolkit.WithSkill(pdf, testSkill(t, "hidden", "Hidden.", "x\n", nil)),
		toolkit.WithPolicy(policy), toolkit.WithAudit(slog.NewJSONHandler(&audit, nil)),
	})
	ts := f.serveHTTP(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := t.Context()
			cs, err := skillsClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			mustNotErr(t, err)
			defer cs.Close()
			ext := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]
			if b, _ := json.Marshal(ext); string(b) != `{"directoryRead":true}` {
				t.Fatalf("extension declared: %s", b)
			}
			list, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, methodSkillsList, &listSkillsParams{})
			mustNotErr(t, err)
			if len(list.Skills) != 1 || list.Skills[0].URI != "skill://builtin/pdf/SKILL.md" || list.ResultType != "complete" {
				t.Fatalf("skills/list: %+v", list)
			}
			rl, err := cs.ListResources(ctx, nil)
			mustNotErr(t, err)
			var listed []string
			for _, r := range rl.Resources {
				listed = append(listed, r.URI+" "+r.Name+" "+r.MIMEType)
			}
			if strings.Join(listed, ",") != "skill://builtin/pdf/SKILL.md pdf text/markdown" {
				t.Fatalf("resources/list: %v", listed)
			}
			e := list.Skills[0]
			if e.Frontmatter["description"] != "Handles PDF files." || len(e.Resources.Files) != 4 {
				t.Fatalf("entry: %+v", e)
			}
			got, err := sdk.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodSkillsGet, &getSkillParams{URI: e.URI})
			mustNotErr(t, err)
			if got.Skill.URI != e.URI {
				t.Fatalf("skills/get: %+v", got)
			}
			for _, uri := range []string{"skill://builtin/hidden/SKILL.md", "skill://builtin/none/SKILL.md", "skill://builtin/pdf/logo.bin"} {
				_, err = sdk.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodSkillsGet, &getSkillParams{URI: uri})
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("skills/get %s: %v", uri, err)
				}
			}
			// Every file reads, verified against the entry.
			client := func(ctx context.Context, uri string) ([]byte, error) {
				res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
				if err != nil {
					return nil, err
				}
				if res.Contents[0].Blob != nil {
					return res.Contents[0].Blob, nil
				}
				return []byte(res.Contents[0].Text), nil
			}
			remote, err := skill.FromEntry(e, skill.Limits{}, client)
			mustNotErr(t, err)
			for _, file := range remote.Files() {
				if _, err := remote.ReadFile(ctx, file.Path); err != nil {
					t.Errorf("%s: %v", file.Path, err)
				}
			}
			if body, err := skill.Body(ctx, remote); err != nil || body != "Pick a template from templates/.\n" {
				t.Errorf("body %q: %v", body, err)
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "skill://builtin/hidden/SKILL.md"}); err == nil {
				t.Error("read a hidden skill")
			}
			dir, err := sdk.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodDirectoryRead, &readDirectoryParams{URI: "skill://builtin/pdf/templates"})
			mustNotErr(t, err)
			var names []string
			for _, r := range dir.Resources {
				names = append(names, r.Name+"="+r.MIMEType)
			}
			if strings.Join(names, ",") != "invoice.md=text/markdown,regional=inode/directory" {
				t.Errorf("directory: %v", names)
			}
			_, err = sdk.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodDirectoryRead, &readDirectoryParams{URI: "skill://builtin/pdf/SKILL.md"})
			if we := (*jsonrpc.Error)(nil); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("directory read of a file: %v", err)
			}
		})
	}
	if a := audit.String(); !strings.Contains(a, `"tool":"skill:pdf"`) || !strings.Contains(a, `"outcome":"ok"`) {
		t.Errorf("audit:\n%s", a)
	}
}

// A toolkit without skills declares no extension.
func TestServeNoSkillsDeclaresNothing(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	cs := f.connect(t, nil)
	if _, ok := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]; ok {
		t.Fatal("declared the skills extension without skills")
	}
}
