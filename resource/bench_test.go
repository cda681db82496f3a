package resource

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var sink Resource

// BenchmarkConstructors measures the constructors the toolkit's call path
// uses to wrap tool outputs, beside the baseline of copying the same bytes.
func BenchmarkConstructors(b *testing.B) {
	short := "The quick brown fox jumps over the lazy dog."
	text4k := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog.\n", 94))
	raw := json.RawMessage(`{"status":"ok","items":[1,2,3],"name":"quick brown fox"}`)
	latin1 := bytes.Repeat([]byte("caf\xe9 cr\xe8me br\xfbl\xe9e "), 200)
	png := append(bytes.Clone(pngHeader), make([]byte, 4096)...)

	b.Run("Baseline/copy_short", func(b *testing.B) {
		b.ReportAllocs()
		var s string
		for b.Loop() {
			s = string([]byte(short))
		}
		_ = s
	})
	b.Run("Text/short", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = Text("output", short)
		}
	})
	b.Run("Baseline/json.Valid_short", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Valid(raw)
		}
	})
	b.Run("JSONRaw/short", func(b *testing.B) {
		b.ReportAllocs()
		var v any = raw // tool outputs arrive as any
		for b.Loop() {
			sink, _ = JSON("output", v)
		}
	})
	b.Run("JSON/map", func(b *testing.B) {
		b.ReportAllocs()
		v := map[string]any{"status": "ok", "items": []int{1, 2, 3}}
		for b.Loop() {
			sink, _ = JSON("output", v)
		}
	})
	for _, c := range []struct {
		name string
		data []byte
	}{{"text_4k", text4k}, {"png_4k", png}, {"latin1_4k", latin1}} {
		b.Run("Baseline/copy_"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			var s string
			for b.Loop() {
				s = string(c.data)
			}
			_ = s
		})
		b.Run("Data/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				sink, _ = Data("output", c.data)
			}
		})
	}
	b.Run("Read/text_4k", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text4k)))
		for b.Loop() {
			sink, _ = Read(bytes.NewReader(text4k))
		}
	})
}
