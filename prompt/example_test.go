package prompt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

func ExampleRead() {
	const file = `---
name: summarize
title: Summarize text into key points
model: claude-haiku-4-5-20251001
system_prompt: You are an expert summarizer.
input:
  type: object
  properties:
    text: {type: string}
    style: {type: string}
  required: [text]
---
Summarize the following text in a {{ default "neutral" .style }} style:

{{ .text }}
`
	p, err := prompt.Read(strings.NewReader(file))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name(), "|", p.Title(), "|", p.Model())

	input, _ := json.Marshal(map[string]string{"text": "The quick brown fox jumps over the lazy dog."})
	req, err := p.Prepare(context.Background(), resource.Must("input", json.RawMessage(input)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.System)
	fmt.Println(req.User)

	_, err = p.Render(context.Background(), json.RawMessage(`{"style":"terse"}`))
	fmt.Println(err != nil)
	// Output:
	// summarize | Summarize text into key points | claude-haiku-4-5-20251001
	// You are an expert summarizer.
	// Summarize the following text in a neutral style:
	//
	// The quick brown fox jumps over the lazy dog.
	// true
}
