package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// Fields of a tool definition, in the order they are digested and
// reported.
const (
	FieldName         = "name"
	FieldTitle        = "title"
	FieldDescription  = "description"
	FieldInputSchema  = "input_schema"
	FieldOutputSchema = "output_schema"
	FieldAnnotations  = "annotations"
	// FieldUI is the MCP Apps part of the tool's `_meta`: its `ui` object
	// (the view it opens, who may call it) and the legacy
	// "ui/resourceUri" key. It counts only for a tool that has one, so
	// that the digests of every other tool are what they were before it.
	FieldUI = "ui"
)

// definitionFields lists the fields in order.
var definitionFields = [...]string{FieldName, FieldTitle, FieldDescription, FieldInputSchema, FieldOutputSchema, FieldAnnotations, FieldUI}

// Bounds of the text a pin keeps for people to read.
const (
	maxKeptTitle       = 256
	maxKeptDescription = 1024
)

// Definition is what a pin records of one version of a tool's definition:
// SHA-256 digests (hex) of the whole and of each field, and the title and
// the start of the description for the person who approves it.
type Definition struct {
	// Digest covers every field.
	Digest string `json:"digest"`
	// Content covers every field but the name: the same content under
	// another name has the same Content.
	Content string `json:"content"`
	// Fields holds the digest of each field (FieldName, FieldTitle, ...).
	Fields map[string]string `json:"fields"`
	// Title is the tool's title, cut to 256 bytes.
	Title string `json:"title,omitempty"`
	// Description is the start of the tool's description (1 KiB).
	Description string `json:"description,omitempty"`
	// Seen is when this version was first seen.
	Seen time.Time `json:"seen"`
}

// annotationsJSON is how a tool's hints are digested: as given, absent
// hints kept absent.
type annotationsJSON struct {
	ReadOnly    bool  `json:"readOnly"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  bool  `json:"idempotent"`
	OpenWorld   *bool `json:"openWorld,omitempty"`
}

// definitionOf digests t's definition. A tool whose methods fail or panic
// still gets a definition, whose digests change when the failure does.
func definitionOf(t toolkit.Tool, now time.Time) (d Definition) {
	fields := make(map[string]string, len(definitionFields))
	sum := func(b []byte) string {
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	read := func(field string, f func() (any, error)) {
		defer func() {
			if r := recover(); r != nil {
				fields[field] = sum(fmt.Appendf(nil, "panic: %v", r))
			}
		}()
		v, err := f()
		if err != nil {
			fields[field] = sum(fmt.Appendf(nil, "error: %v", err))
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = fmt.Appendf(nil, "unmarshalable %T: %v", v, err)
		}
		fields[field] = sum(b)
	}
	var meta toolkit.ToolMeta
	read(FieldName, func() (any, error) { return t.Name(), nil })
	read(FieldAnnotations, func() (any, error) {
		meta = t.Meta()
		return annotationsJSON{meta.ReadOnlyHint, meta.DestructiveHint, meta.IdempotentHint, meta.OpenWorldHint}, nil
	})
	read(FieldTitle, func() (any, error) { return meta.Title, nil })
	var desc string
	read(FieldDescription, func() (any, error) { desc = t.Description(); return desc, nil })
	read(FieldInputSchema, func() (any, error) { return t.InputSchema() })
	read(FieldOutputSchema, func() (any, error) { return t.OutputSchema() })
	if ui := appsMeta(t); ui != nil {
		read(FieldUI, func() (any, error) { return ui, nil })
	}

	var all, content strings.Builder
	for _, f := range definitionFields {
		if _, ok := fields[f]; !ok {
			continue // FieldUI of a tool without one
		}
		fmt.Fprintf(&all, "%s=%s\n", f, fields[f])
		if f != FieldName {
			fmt.Fprintf(&content, "%s=%s\n", f, fields[f])
		}
	}
	return Definition{
		Digest:      sum([]byte(all.String())),
		Content:     sum([]byte(content.String())),
		Fields:      fields,
		Title:       cut(meta.Title, maxKeptTitle),
		Description: cut(desc, maxKeptDescription),
		Seen:        now.UTC(),
	}
}

// appsMeta returns the MCP Apps keys of t's `_meta` (nil when it has
// none): an app-only tool that becomes callable by models, or a view that
// moves, is a change of definition.
func appsMeta(t toolkit.Tool) (ui map[string]any) {
	defer func() {
		if r := recover(); r != nil {
			ui = map[string]any{"panic": fmt.Sprint(r)}
		}
	}()
	meta := resource.MetaOf(t)
	for _, k := range [...]string{"ui", "ui/resourceUri"} {
		if v, ok := meta[k]; ok {
			if ui == nil {
				ui = map[string]any{}
			}
			ui[k] = v
		}
	}
	return ui
}

// FieldChange is one field that differs between two definitions.
type FieldChange struct {
	// Field is FieldName, FieldTitle, FieldDescription, ...
	Field string
	// Before and After are the field as the pins know it: the text for
	// the title and description (as far as kept), the start of the
	// digest for the others.
	Before, After string
}

// changes lists the fields in which after differs from before (every
// field when before is nil).
func changes(before *Definition, after *Definition) []FieldChange {
	var out []FieldChange
	for _, f := range definitionFields {
		if _, ok := after.Fields[f]; !ok && (before == nil || before.Fields[f] == "") {
			continue // FieldUI of tools without one
		}
		var b string
		if before != nil {
			if before.Fields[f] == after.Fields[f] {
				continue
			}
			b = shown(before, f)
		}
		out = append(out, FieldChange{Field: f, Before: b, After: shown(after, f)})
	}
	return out
}

// shown is how field f of d is shown to people.
func shown(d *Definition, f string) string {
	switch f {
	case FieldTitle:
		return d.Title
	case FieldDescription:
		return d.Description
	}
	if h := d.Fields[f]; len(h) >= 12 {
		return "sha256:" + h[:12]
	}
	return ""
}

// fieldNames lists the fields of cs.
func fieldNames(cs []FieldChange) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Field
	}
	return strings.Join(names, ", ")
}

// cut returns at most n bytes of s, on a character boundary, marking the
// cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
