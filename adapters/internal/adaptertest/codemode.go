package adaptertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/codemode"
)

// The conversation of the code-mode tests: the model is offered code
// mode's two tools only; it asks for the declarations of the tools that
// give forecasts, then runs one script that gets three cities' forecasts
// and the remote server's stats and joins them, and answers with the
// script's result (CodeModeAnswer): three turns, whatever the number of
// inner calls.
const (
	DeclareID      = "call_declare"
	DeclareArgs    = `{"query":"forecast for a city"}`
	RunID          = "call_run"
	CodeModeAnswer = "3 forecasts, highest 21; 3 documents"
)

// CodeModeScript is the script the model runs.
const CodeModeScript = `const cities = ["Oslo", "Lisbon", "Cairo"];
const highs = [];
for (const city of cities) highs.push((await tools.get_forecast({city})).high);
const stats = await tools.stats({});
return cities.length + " forecasts, highest " + Math.max(...highs) + "; " + stats.matches + " documents";`

// CodeModeToolkit returns Toolkit with code mode's tools added (scripts
// run in process).
func CodeModeToolkit(t testing.TB) *toolkit.Toolkit {
	t.Helper()
	tk := Toolkit(t)
	m, err := codemode.New(tk, codemode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddTool(m.Tools()...); err != nil {
		t.Fatal(err)
	}
	return tk
}

// CodeModeOption offers the model code mode's tools only.
func CodeModeOption() adapter.Option { return adapter.WithFilter(codemode.Filter()) }

// CodeModeTurn is the scripted model of the code-mode tests, a Turn that
// looks at the offered tools' names only.
func CodeModeTurn(tools []Tool, results map[string]string) (call *Call, answer string, err error) {
	offered := names(tools)
	want := []string{codemode.DeclareToolsName, codemode.RunCodeName}
	got := slices.Sorted(slices.Values(offered))
	if !slices.Equal(got, want) {
		return nil, "", fmt.Errorf("the request offers %v, want %v", offered, want)
	}
	switch {
	case results[RunID] != "":
		if got := results[RunID]; got != CodeModeAnswer {
			return nil, "", fmt.Errorf("the script's result = %q", got)
		}
		return nil, CodeModeAnswer, nil
	case results[DeclareID] != "":
		if d := results[DeclareID]; !strings.Contains(d, "get_forecast(args: {") {
			return nil, "", fmt.Errorf("the declarations:\n%s", d)
		}
		args := JSON(map[string]string{"code": CodeModeScript})
		return &Call{ID: RunID, Name: codemode.RunCodeName, Args: args}, "", nil
	case len(results) > 0:
		return nil, "", fmt.Errorf("unexpected results %v", results)
	}
	return &Call{ID: DeclareID, Name: codemode.DeclareToolsName, Args: DeclareArgs}, "", nil
}
