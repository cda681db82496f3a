package resource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/resource"
)

func ExampleText() {
	r, err := resource.Text("greeting", "Hello, world")
	if err != nil {
		panic(err)
	}
	data, _ := r.Read(context.Background())
	fmt.Println(r.Name(), r.Type())
	fmt.Println(string(data))
	fmt.Println(strings.HasPrefix(r.URI(), "mem:greeting/"))
	// Output:
	// greeting text/plain; charset=utf-8
	// Hello, world
	// true
}

func ExampleText_badName() {
	_, err := resource.Text("my greeting", "Hello")
	fmt.Println(errors.Is(err, errs.ErrBadParameter))
	// Output:
	// true
}

func ExampleJSON() {
	r, _ := resource.JSON("result", map[string]string{"status": "ok"})
	data, _ := r.Read(context.Background())
	fmt.Println(r.Type(), string(data))

	// Raw JSON is validated and kept as it is.
	raw, _ := resource.JSON("raw", json.RawMessage(`{"a": [1, 2]}`))
	data, _ = raw.Read(context.Background())
	fmt.Println(string(data))

	_, err := resource.JSON("broken", json.RawMessage(`{"a":`))
	fmt.Println(err)
	// Output:
	// application/json {"status":"ok"}
	// {"a": [1, 2]}
	// bad parameter: resource "broken": invalid JSON
}

func ExampleData() {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	r, _ := resource.Data("screenshot", png)
	fmt.Println(r.Type())

	// Latin-1 text becomes UTF-8.
	r, _ = resource.Data("note", []byte("caf\xe9"))
	data, _ := r.Read(context.Background())
	fmt.Println(r.Type(), string(data))
	// Output:
	// image/png
	// text/plain; charset=utf-8 café
}

func ExampleBlob() {
	r, _ := resource.Blob("clip", "audio/wav", []byte("RIFF...."))
	fmt.Println(r.Type())
	_, err := resource.Blob("clip", "wav", nil)
	fmt.Println(err != nil)
	// Output:
	// audio/wav
	// true
}

func ExampleRead() {
	r, _ := resource.Read(strings.NewReader("a,b\n1,2\n"), resource.WithFileName("monthly-report.csv"))
	fmt.Println(r.Name(), r.Type())

	_, err := resource.Read(strings.NewReader("too long"), resource.WithMaxSize(4))
	fmt.Println(err)
	// Output:
	// monthly_report text/csv; charset=utf-8
	// bad parameter: resource "data": content larger than 4 bytes
}

func ExampleMust() {
	for _, r := range []resource.Resource{
		resource.Must("greeting", "Hello, world"),
		resource.Must("result", json.RawMessage(`{"ok":true}`)),
		resource.Must("blob", []byte{0x1f, 0x8b, 0x08, 0x00}),
	} {
		fmt.Println(r.Name(), r.Type())
	}
	// Output:
	// greeting text/plain; charset=utf-8
	// result application/json
	// blob application/x-gzip
}

func ExampleWithURI() {
	r := resource.Must("report", "quarterly figures")
	r = resource.WithURI("file:data/report.txt", r)
	r = resource.WithDescription("Monthly report", r)
	fmt.Println(r.URI())
	fmt.Println(r.Description())
	fmt.Println(resource.CheckURI(r.URI()))
	// Output:
	// file:data/report.txt
	// Monthly report
	// <nil>
}

func ExampleCheckURI() {
	for _, uri := range []string{"file:///etc/motd", "relative/path", "mem:a b"} {
		fmt.Println(uri, resource.CheckURI(uri) == nil)
	}
	// Output:
	// file:///etc/motd true
	// relative/path false
	// mem:a b false
}

func ExampleIsText() {
	for _, t := range []string{"text/csv", "application/ld+json", "image/svg+xml", "image/png"} {
		fmt.Println(t, resource.IsText(t), resource.IsJSON(t))
	}
	// Output:
	// text/csv true false
	// application/ld+json true true
	// image/svg+xml true false
	// image/png false false
}
