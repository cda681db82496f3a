package prompt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/prompt"
)

func TestReadGood(t *testing.T) {
	tests := []struct {
		file, name, title string
		check             func(t *testing.T, a *prompt.Agent)
	}{
		{"summarize.md", "summarize", "Summarize text into key points", func(t *testing.T, a *prompt.Agent) {
			if a.Model() != "claude-haiku-4-5-20251001" || a.Provider() != "anthropic" {
				t.Errorf("model/provider = %q/%q", a.Model(), a.Provider())
			}
			if a.SystemPrompt() != "You are an expert summarizer." {
				t.Errorf("system prompt = %q", a.SystemPrompt())
			}
			if a.Description() != "Summarizes long-form text into key points and sentiment." {
				t.Errorf("description = %q", a.Description())
			}
			in, _ := a.InputSchema()
			out, _ := a.OutputSchema()
			if in == nil || in.Type != "string" || out == nil || out.Type != "object" || len(out.Required) != 2 {
				t.Errorf("schemas: in %v out %v", in, out)
			}
			if a.Template() != "Summarize the following text:\n\n{{ . }}" {
				t.Errorf("template = %q", a.Template())
			}
		}},
		{"greet.md", "greet", "Greet a person by name", func(t *testing.T, a *prompt.Agent) {
			if got := strings.Join(a.Tools(), ","); got != "weather,search.web" {
				t.Errorf("tools = %q", got)
			}
			a.Tools()[0] = "changed"
			if a.Tools()[0] != "weather" {
				t.Error("Tools returns the prompt's own slice")
			}
		}},
		{"heading_title.md", "heading_title", "Translate into French", nil},
		{"no_front_matter.md", "no_front_matter", "Plain markdown prompt file", nil},
		{"crlf.md", "crlf", "Windows line endings", func(t *testing.T, a *prompt.Agent) {
			if a.SystemPrompt() != "Line one.\nLine two." || strings.Contains(a.Template(), "\r") {
				t.Errorf("CR left in system prompt %q or template %q", a.SystemPrompt(), a.Template())
			}
		}},
		{"bom.md", "bom", "Starts with a byte order mark", nil},
		{"latin1.md", "latin1", "Café crème brûlée", func(t *testing.T, a *prompt.Agent) {
			if a.Template() != "Recipe for crème {{ . }}" {
				t.Errorf("template = %q", a.Template())
			}
		}},
		{"utf16.md", "utf16", "Sixteen bit unicode ✓", nil},
		{"utf16be_nobom.md", "utf16be_nobom", "Big endian without a mark", nil},
		{"empty_body.md", "empty_body", "Only a system prompt", func(t *testing.T, a *prompt.Agent) {
			if a.Template() != "" {
				t.Errorf("template = %q", a.Template())
			}
		}},
		{"thinking.md", "planner", "Plan a project step by step", func(t *testing.T, a *prompt.Agent) {
			if !a.Thinking() || a.ThinkingBudget() != 2048 || a.MaxTokens() != 8192 {
				t.Errorf("thinking %v budget %d max tokens %d", a.Thinking(), a.ThinkingBudget(), a.MaxTokens())
			}
			if a.Model() != "gemini-2.5-pro" || a.Provider() != "google" || len(a.Tools()) != 2 {
				t.Errorf("model %q provider %q tools %v", a.Model(), a.Provider(), a.Tools())
			}
		}},
	}
	files, _ := filepath.Glob("testdata/good/*.md")
	if len(files) != len(tests) {
		t.Errorf("%d files in testdata/good, %d test cases", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "good", tt.file)
			a, err := prompt.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != tt.name || a.Title() != tt.title {
				t.Errorf("name, title = %q, %q; want %q, %q", a.Name(), a.Title(), tt.name, tt.title)
			}
			if a.File() != path {
				t.Errorf("File() = %q", a.File())
			}
			if tt.check != nil {
				tt.check(t, a)
			}
			// The same file through ReadFS gives the same prompt.
			b, err := prompt.ReadFS(os.DirFS("testdata"), "good/"+tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if b.Name() != a.Name() || b.Title() != a.Title() || b.Template() != a.Template() {
				t.Errorf("ReadFS differs: %q %q", b.Name(), b.Title())
			}
		})
	}
}

func TestReadBad(t *testing.T) {
	tests := map[string]string{
		"unknown_field.md":           `unknown field "temperature"`,
		"unclosed.md":                "never closed",
		"short_title.md":             "shorter than 10 characters",
		"short_heading.md":           `heading "Short" is shorter`,
		"no_title.md":                "no title",
		"bad_name.md":                `name "bad-name"`,
		"bad-file-name.md":           `rename the file`,
		"reserved_name.md":           "reserved",
		"bad_schema.md":              `input schema (line 4): unknown type "strng"`,
		"bad_output_schema.md":       "output schema",
		"cyclic_schema.md":           "input schema (line 4): a $ref cycle",
		"cyclic_output_schema.md":    "output schema (line 4): a $ref cycle",
		"deep_schema.md":             "input schema (line 4): subschemas nest more than 64 levels deep",
		"bad_template.md":            "unclosed action",
		"unknown_func.md":            `function "shout" not defined`,
		"sub_template.md":            "sub-templates",
		"template_call.md":           "{{ template }} is not supported",
		"negative_budget.md":         "thinking_budget -1 is negative",
		"budget_without_thinking.md": "thinking is not true",
		"zero_max_tokens.md":         "max_tokens 0 must be positive",
		"not_mapping.md":             "want a mapping",
		"duplicate_field.md":         `field "title" given twice`,
		"bad_yaml.md":                "front matter",
		"wrong_type.md":              "line 3: cannot unmarshal",
		"dup_tool.md":                `"a" listed twice`,
		"empty_tool.md":              "empty tool name",
		"multiline_title.md":         "single line",
	}
	files, _ := filepath.Glob("testdata/bad/*.md")
	if len(files) != len(tests) {
		t.Errorf("%d files in testdata/bad, %d test cases", len(files), len(tests))
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", file)
			_, err := prompt.ReadFile(path)
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("err = %v, want ErrBadParameter", err)
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v\nwant it to contain %q and the file name", err, want)
			}
		})
	}
}

func TestReadNoName(t *testing.T) {
	// A plain reader has no file name, so the name must be in the front matter.
	_, err := prompt.Read(strings.NewReader("# A heading long enough\nbody"))
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "no name") {
		t.Errorf("err = %v", err)
	}
	a, err := prompt.Read(strings.NewReader("---\nname: x\n---\n# A heading long enough\nbody"))
	if err != nil || a.Name() != "x" || a.File() != "" {
		t.Errorf("Read = %v, %v", a, err)
	}
}

func TestReadEdgeCases(t *testing.T) {
	tests := []struct {
		name, src, err string
	}{
		{"empty file", "", "no title"},
		{"only dashes", "---", "never closed"},
		{"only dashes and newline", "---\n", "never closed"},
		{"empty front matter", "---\n---\n# Title long enough\n", ""},
		{"null front matter", "---\n~\n---\n# Title long enough\n", ""},
		{"closing dots", "---\ntitle: Title long enough\n...\nbody", ""},
		{"closing at end of file", "---\ntitle: Title long enough\n---", ""},
		{"trailing spaces on fences", "---  \ntitle: Title long enough\n---\t\nbody", ""},
		{"dashes later are body", "# Title long enough\n---\nname: x\n---\n", ""},
		{"scalar front matter", "---\nhello\n---\nbody", "want a mapping"},
		{"non-string key", "---\n[a]: 1\n---\nbody", "plain strings"},
		{"schema not JSON", "---\ntitle: Title long enough\ninput: {1: {type: string}}\n---\nbody", "input schema"},
		{"schema is string", "---\ntitle: Title long enough\ninput: \"{}\"\n---\nbody", "input schema"},
		{"anchors and aliases", "---\ntitle: &t Title long enough\ndescription: *t\n---\nbody", ""},
		{"title too short in runes", "---\ntitle: ééééééééé\n---\nbody", "shorter than 10"},
		{"title exactly 10", "---\ntitle: éééééééééé\n---\nbody", ""},
		{"level two heading", "## Title long enough\nbody", "no title"},
		{"hash without space", "#Title long enough\nbody", "no title"},
		{"tab-indented yaml", "---\ntitle: Title long enough\n\tmodel: x\n---\nbody", "front matter"},
		{"thinking budget zero", "---\ntitle: Title long enough\nthinking_budget: 0\n---\nbody", ""},
		{"max tokens string", "---\ntitle: Title long enough\nmax_tokens: many\n---\nbody", "cannot unmarshal"},
		{"tool with space", "---\ntitle: Title long enough\ntools: [\"a b\"]\n---\nbody", "white space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prompt.ReadFS(fstest.MapFS{"p.md": {Data: []byte(tt.src)}}, "p.md")
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("err = %v, want %q", err, tt.err)
			case err != nil && !errors.Is(err, errs.ErrBadParameter):
				t.Errorf("err = %v does not wrap ErrBadParameter", err)
			}
		})
	}
}

func TestReadTooLarge(t *testing.T) {
	src := "# Title long enough\n" + strings.Repeat("x", prompt.MaxFileSize)
	_, err := prompt.ReadFS(fstest.MapFS{"big.md": {Data: []byte(src)}}, "big.md")
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := prompt.ReadFile(filepath.Join(t.TempDir(), "missing.md"))
	if !errors.Is(err, errs.ErrNotFound) || !strings.Contains(err.Error(), "missing.md") {
		t.Errorf("err = %v, want ErrNotFound naming the file", err)
	}
	_, err = prompt.ReadFS(fstest.MapFS{}, "missing.md")
	if !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("ReadFS: err = %v, want ErrNotFound", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadReaderError(t *testing.T) {
	_, err := prompt.Read(failingReader{})
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v", err)
	}
}

func TestReadUTF16LittleEndianWithoutBOM(t *testing.T) {
	var buf bytes.Buffer
	for _, r := range "---\ntitle: Little endian, no mark\n---\nHi {{ . }}\n" {
		buf.WriteByte(byte(r))
		buf.WriteByte(0)
	}
	a, err := prompt.ReadFS(fstest.MapFS{"le.md": {Data: buf.Bytes()}}, "le.md")
	if err != nil {
		t.Fatal(err)
	}
	if a.Title() != "Little endian, no mark" {
		t.Errorf("title = %q", a.Title())
	}
}
