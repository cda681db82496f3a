package codemode_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/codemode"
	"github.com/llmkit/toolkit/tool"
)

type cityIn struct {
	City string `json:"city"`
}

type weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

// A script asks for the weather of three cities and returns the warmest:
// one run_code call instead of three tool calls and their results.
func Example() {
	tk, _ := toolkit.New()
	temps := map[string]float64{"Oslo": 4, "Lisbon": 19, "Cairo": 27}
	_ = tk.AddTool(tool.Must("weather", "The weather of a city.", func(_ context.Context, in cityIn) (weather, error) {
		return weather{City: in.City, TempC: temps[in.City]}, nil
	}))
	m, _ := codemode.New(tk, codemode.Config{})
	_ = tk.AddTool(m.Tools()...)

	decl, _, _ := m.Declarations(context.Background(), []string{"weather"}, "", 0)
	fmt.Print(strings.Split(codemode.Declare(decl), "\n")[2])
	fmt.Println()
	out, err := m.Run(context.Background(), `
const all = [];
for (const city of ["Oslo", "Lisbon", "Cairo"]) all.push(await tools.weather({city}));
return all.sort((a, b) => b.temp_c - a.temp_c)[0].city;`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Text, out.Calls)
	// Output:
	//   weather(args: {
	// Cairo 3
}
