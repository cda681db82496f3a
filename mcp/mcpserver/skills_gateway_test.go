package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/skill"
)

// The gateway serves an upstream's skills (a server written with the
// Skills extension SDK, tools/peers/skillsserver.mjs) under the upstream's
// namespace, to clients of both protocol generations, stateful and
// stateless: entries, verified reads of every file, directory reads.
func TestGatewayServesUpstreamSkills(t *testing.T) {
	dir := t.TempDir()
	for p, content := range map[string]string{
		"acme/refunds/SKILL.md":           "---\nname: refunds\ndescription: Refunds orders.\n---\nUse templates/email.md.\n",
		"acme/refunds/templates/email.md": "Dear customer,\n",
	} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		mustNotErr(t, os.MkdirAll(filepath.Dir(full), 0o755))
		mustNotErr(t, os.WriteFile(full, []byte(content), 0o644))
	}
	upstream := peers.StartSkillsServerHTTP(t, dir)
	leakCheck(t)
	stateful := startGateway(t, upstream, nil, nil, nil)
	stateless := startGateway(t, upstream, nil, nil, []HTTPOption{WithStateless()})
	for _, tc := range []struct{ name, url, version string }{
		{"stateful", stateful.url, "2025-11-25"},
		{"stateful", stateful.url, "2026-07-28"},
		{"stateless", stateless.url, "2026-07-28"},
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			ctx := t.Context()
			cs, err := skillsClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: tc.url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			mustNotErr(t, err)
			defer cs.Close()
			if _, ok := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]; !ok {
				t.Fatal("the skills extension is not declared")
			}
			list, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, methodSkillsList, &listSkillsParams{})
			mustNotErr(t, err)
			if len(list.Skills) != 1 || list.Skills[0].URI != "skill://up/acme/refunds/SKILL.md" {
				t.Fatalf("skills/list: %+v", list.Skills)
			}
			s, err := skill.FromEntry(list.Skills[0], skill.Limits{}, func(ctx context.Context, uri string) ([]byte, error) {
				res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
				if err != nil {
					return nil, err
				}
				return []byte(res.Contents[0].Text), nil
			})
			mustNotErr(t, err)
			if body, err := skill.Body(ctx, s); err != nil || body != "Use templates/email.md.\n" {
				t.Fatalf("body %q: %v", body, err)
			}
			if b, err := s.ReadFile(ctx, "templates/email.md"); err != nil || string(b) != "Dear customer,\n" {
				t.Fatalf("file %q: %v", b, err)
			}
			d, err := sdk.CallCustomMethod[*readDirectoryParams, *readDirectoryResult](ctx, cs, methodDirectoryRead, &readDirectoryParams{URI: "skill://up/acme"})
			mustNotErr(t, err)
			if len(d.Resources) != 1 || d.Resources[0].URI != "skill://up/acme/refunds" || d.Resources[0].MIMEType != directoryType {
				t.Fatalf("directory: %+v", d.Resources)
			}
		})
	}
}
