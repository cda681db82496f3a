package mcp

import (
	"context"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/model"
)

// A host that renders MCP Apps itself reads a remote tool's view through
// the toolkit: the HTML of its own server's ui:// resource, its MIME type
// and the sandbox its contents ask for.
func TestAppViewOfRemoteTool(t *testing.T) {
	leakCheck(t)
	srv := newServer(t, testserver.Options{Server: testserver.MetaOptions()})
	srv.AddMetaItems()
	tk := benchToolkit(t, testserver.ServeHTTP(t, srv.Server, testserver.Stateful).URL)
	v, err := model.AppViewOf(context.Background(), tk, "remote.app_view")
	if err != nil {
		t.Fatal(err)
	}
	if v.URI != testserver.MetaViewURI || v.Namespace != "remote" || string(v.HTML) != testserver.MetaViewHTML || v.MIMEType != testserver.MetaAppMIME {
		t.Errorf("view %+v", v)
	}
	csp, _ := v.UI["csp"].(map[string]any)
	if csp == nil || v.UI["prefersBorder"] != true {
		t.Errorf("sandbox %v, want the contents' csp and prefersBorder", v.UI)
	}
}
