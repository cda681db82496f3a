package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

// storeDelegate serves a store as the user namespace.
type storeDelegate struct{ dir string }

func (d *storeDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *storeDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *storeDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url != toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	return store.Open(d.dir, onEvent)
}

// A skill added, edited and removed in the store while a client is
// connected is announced to the client (notifications/resources/list_changed:
// the SKILL.md resources changed) and is in its next skills/list (the time
// from the write to the client's list is logged: well under a second).
func TestServeStoreSkillsWhileConnected(t *testing.T) {
	leakCheck(t)
	dir := t.TempDir()
	f := newFixture(t, []toolkit.Option{toolkit.WithDelegate(&storeDelegate{dir: dir})})
	ctx, cancel := context.WithCancel(t.Context())
	runDone := make(chan error, 1)
	go func() { runDone <- f.tk.Run(ctx) }()
	defer func() { cancel(); mustNotErr(t, <-runDone) }()
	_, err := f.tk.WaitConnectors(ctx)
	mustNotErr(t, err)
	changed := make(chan struct{}, 64)
	ts := f.serveHTTP(t)
	cs, err := skillsClient(&sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	mustNotErr(t, err)
	defer cs.Close()
	// see waits for a skill list change, then for skills/list to show want
	// (the description of skill://user/notes, "" for none).
	see := func(step, want string, start time.Time) {
		t.Helper()
		for {
			select {
			case <-changed:
			case <-time.After(waitLimit):
				t.Fatalf("%s: no resources/list_changed", step)
			}
			list, err := sdk.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, methodSkillsList, &listSkillsParams{})
			mustNotErr(t, err)
			got := ""
			for _, e := range list.Skills {
				if e.URI == "skill://user/notes/SKILL.md" {
					got, _ = e.Frontmatter["description"].(string)
				}
			}
			if got == want {
				t.Logf("%s: the client saw it %v after the write", step, time.Since(start))
				return
			}
		}
	}
	md := func(desc string) []byte {
		return []byte("---\nname: notes\ndescription: " + desc + "\n---\nTake notes.\n")
	}
	skillDir := filepath.Join(dir, store.SkillsDir, "notes")
	start := time.Now()
	mustNotErr(t, os.MkdirAll(skillDir, 0o755))
	mustNotErr(t, os.WriteFile(filepath.Join(skillDir, "SKILL.md"), md("Takes notes."), 0o644))
	see("add", "Takes notes.", start)
	start = time.Now()
	mustNotErr(t, os.WriteFile(filepath.Join(skillDir, "SKILL.md"), md("Takes better notes."), 0o644))
	see("edit", "Takes better notes.", start)
	start = time.Now()
	mustNotErr(t, os.RemoveAll(skillDir))
	see("remove", "", start)
}
