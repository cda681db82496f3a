package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/llmkit/toolkit/adapters/adapter"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

func assistant(t *testing.T, calls string) openai.ChatCompletionMessage {
	t.Helper()
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","tool_calls":`+calls+`}`), &msg); err != nil {
		t.Fatal(err)
	}
	return msg
}

// One Tools serves many conversations at once while the toolkit changes
// under it (run with -race).
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := oa.New(tk)
	msg := assistant(t, `[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				if _, err := tools.ChatTools(ctx); err != nil {
					t.Error(err)
				}
				if _, err := tools.ResponseTools(ctx); err != nil {
					t.Error(err)
				}
				out := tools.RunChat(ctx, msg)
				if len(out) != 1 || out[0].OfTool.Content.OfString.Value != "Sunny in Oslo" {
					t.Errorf("goroutine %d, round %d: %s", g, i, at.JSON(out))
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			name := fmt.Sprintf("extra_%d", i)
			if err := tk.AddTool(tool.Must(name, "An extra tool.", func(_ context.Context, _ struct{}) (string, error) { return name, nil })); err != nil {
				t.Error(err)
			}
			if err := tk.RemoveBuiltin(name); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}

// A call that outlives the dispatch timeout is answered in words, and the
// other call of the turn is not held up by it.
func TestTimeout(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	defer close(release)
	hang := tool.Must("hang", "Never answers in time.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-release:
			return "late", nil
		}
	})
	tk := at.Local(t, hang)
	tools := oa.New(tk, adapter.WithDispatch(model.WithTimeout(50*time.Millisecond)))
	if _, err := tools.ChatTools(ctx); err != nil {
		t.Fatal(err)
	}
	out := tools.RunChat(ctx, assistant(t, `[
		{"id":"c1","type":"function","function":{"name":"hang","arguments":"{}"}},
		{"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`))
	if len(out) != 2 || !strings.Contains(out[0].OfTool.Content.OfString.Value, "timed out") ||
		out[0].OfTool.ToolCallID != "c1" || out[1].OfTool.Content.OfString.Value != "Sunny in Oslo" {
		t.Errorf("messages: %s", at.JSON(out))
	}
}

// The tools that best match a message, through the catalog's Search.
func TestSearch(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := oa.New(tk)
	defs, err := tools.Catalog().Search(ctx, "what is the weather forecast in Lima", 2, model.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := tools.ChatToolsOf(defs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range ct {
		names = append(names, c.OfFunction.Function.Name)
	}
	if got := strings.Join(names, ","); got != "get_forecast,get_weather" && got != "get_weather,get_forecast" {
		t.Errorf("search = %s", got)
	}
}
