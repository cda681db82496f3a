package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// The demo's builtin tools, written as typed Go functions: tool.Must infers
// the input schema from the input struct (and the output schema from an
// output struct), and the toolkit validates every call against it.

// wordCountIn is the input of word_count.
type wordCountIn struct {
	Text string `json:"text" jsonschema:"the text to measure"`
}

// wordCountOut is the output of word_count; being a struct, it gives the
// tool an output schema and MCP clients a structured result.
type wordCountOut struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
}

// echoIn is the input of echo (builtin and remote alike).
type echoIn struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

// wordCount counts the words, lines and characters of a text. The demo
// registers it as a builtin and the server mode serves it too, so that the
// sample prompts that use it (prompts/summarize.md) find it wherever they
// are served: in the demo, where the bare name reaches the builtin first,
// and behind the sample gateway, which has only the server's tools.
func wordCount() toolkit.Tool {
	return tool.Must("word_count", "Counts the words, lines and characters of a text.",
		func(_ context.Context, in wordCountIn) (wordCountOut, error) {
			return wordCountOut{
				Words: len(strings.FieldsFunc(in.Text, unicode.IsSpace)),
				Lines: strings.Count(in.Text, "\n") + 1,
				Runes: len([]rune(in.Text)),
			}, nil
		},
		tool.WithTitle("Word count"), tool.WithReadOnly(true))
}

// builtinTools returns the tools the demo registers in its own process.
func builtinTools() []toolkit.Tool {
	return []toolkit.Tool{
		wordCount(),
		tool.Must("echo", "Returns its input text unchanged.",
			func(_ context.Context, in echoIn) (string, error) { return in.Text, nil },
			tool.WithReadOnly(true)),
	}
}

// countdownIn is the input of countdown.
type countdownIn struct {
	From    int `json:"from" jsonschema:"where to start counting down (1 to 10)"`
	DelayMS int `json:"delay_ms,omitempty" jsonschema:"pause between steps in milliseconds (default 50)"`
}

// whoamiOut is the output of whoami.
type whoamiOut struct {
	PID int `json:"pid"`
}

// serverTools returns the tools the program serves in its MCP server mode.
// countdown reports progress to the caller's session at every step: over
// MCP those reports travel as notifications/progress.
func serverTools() []toolkit.Tool {
	return []toolkit.Tool{
		tool.Must("countdown", "Counts down to zero, reporting progress at every step, then announces liftoff.",
			func(ctx context.Context, in countdownIn) (string, error) {
				if in.From < 1 || in.From > 10 {
					return "", fmt.Errorf("from must be between 1 and 10, got %d", in.From)
				}
				delay := time.Duration(in.DelayMS) * time.Millisecond
				if in.DelayMS <= 0 {
					delay = 50 * time.Millisecond
				}
				session := toolkit.SessionFromContext(ctx)
				for i := range in.From {
					if err := session.Progress(float64(i+1), float64(in.From), fmt.Sprintf("%d...", in.From-i)); err != nil {
						return "", err
					}
					// The pause stands for the step's work; it also lets
					// each report reach the caller before the result.
					select {
					case <-ctx.Done():
						return "", ctx.Err()
					case <-time.After(delay):
					}
				}
				return "liftoff", nil
			},
			tool.WithTitle("Countdown"), tool.WithReadOnly(true)),
		tool.Must("echo", "Returns its input text, prefixed with the server's name.",
			func(_ context.Context, in echoIn) (string, error) { return serverName + " says: " + in.Text, nil },
			tool.WithReadOnly(true)),
		tool.Must("whoami", "Returns the process id of the server.",
			func(context.Context, struct{}) (whoamiOut, error) { return whoamiOut{PID: os.Getpid()}, nil },
			tool.WithReadOnly(true)),
		wordCount(),
	}
}
