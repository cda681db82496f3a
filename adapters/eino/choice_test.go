package eino_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	toolkit "github.com/llmkit/toolkit"
	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A toolkit key gives the chat model option that forces the tool, named
// as it is offered: the remote tool under its hashed model name.
func TestToolChoice(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := ei.New(tk)
	opt, err := tools.ToolChoice(ctx, at.RemoteNS+"."+at.RemoteTool)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := tools.Infos(ctx)
	if err != nil {
		t.Fatal(err)
	}
	remote := ""
	for _, in := range infos {
		if at.IsRemote(in.Name) {
			remote = in.Name
		}
	}
	o := model.GetCommonOptions(nil, opt)
	if remote == "" || o.ToolChoice == nil || *o.ToolChoice != schema.ToolChoiceForced || !slices.Equal(o.AllowedToolNames, []string{remote}) {
		t.Errorf("options %+v, remote tool %q", o, remote)
	}
	if _, err := tools.ToolChoice(ctx, "no_such_tool"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
}
