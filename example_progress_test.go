package toolkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

type stepsIn struct {
	Steps int `json:"steps"`
}

// steps works in steps, reporting progress and logging through the session
// of its caller.
func steps(ctx context.Context, in stepsIn) (string, error) {
	s := toolkit.SessionFromContext(ctx)
	for i := 1; i <= in.Steps; i++ {
		if err := s.Progress(float64(i), float64(in.Steps), fmt.Sprintf("step %d", i)); err != nil {
			return "", err
		}
	}
	s.Logger().Info("all steps done", "steps", in.Steps)
	return "finished", nil
}

// The caller of a tool receives its progress with a plain function and its
// log records with a logger of its own. A remote tool's progress and log
// messages reach them the same way.
func ExampleWithProgressFunc() {
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("steps", "Works in steps.", steps)))
	if err != nil {
		log.Fatal(err)
	}
	ctx := toolkit.WithProgressFunc(context.Background(), func(progress, total float64, message string) {
		fmt.Printf("progress %v/%v: %s\n", progress, total, message)
	})
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	ctx = toolkit.WithSessionLogger(ctx, slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})))

	res, err := tk.Call(ctx, "steps", resource.Must("input", json.RawMessage(`{"steps": 3}`)))
	if err != nil {
		log.Fatal(err)
	}
	out, _ := res.Read(ctx)
	fmt.Println(string(out))
	// Output:
	// progress 1/3: step 1
	// progress 2/3: step 2
	// progress 3/3: step 3
	// level=INFO msg="all steps done" steps=3
	// finished
}
