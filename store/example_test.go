package store_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	d, err := store.Open(dir, func(ev toolkit.ConnectorEvent) { fmt.Println("event:", ev.Kind) })
	if err != nil {
		log.Fatal(err)
	}
	// Put writes atomically and updates the lists before it returns; a
	// running d.Run(ctx) would also pick up files written by anyone else.
	err = d.Put("summarize.md", []byte("---\ntitle: Summarize a text\n---\nSummarize: {{ . }}\n"))
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Put("notes.txt", []byte("remember the milk")); err != nil {
		log.Fatal(err)
	}

	prompts, _ := d.ListPrompts(context.Background())
	resources, _ := d.ListResources(context.Background())
	fmt.Println(prompts[0].Name(), "-", prompts[0].Title())
	fmt.Println(resources[0].Name(), resources[0].Type())
	// Output:
	// event: prompt_list_changed
	// event: resource_list_changed
	// summarize - Summarize a text
	// notes text/plain; charset=utf-8
}
