package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/frontmatter"
	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/resource"
)

// MaxFileSize is the largest prompt file Read accepts, in bytes.
const MaxFileSize = 1 << 20

// MinTitleLength is the shortest title a prompt may have, in characters.
const MinTitleLength = 10

// Read parses a prompt file: optional YAML front matter between "---"
// lines, then a markdown body that is a text/template.
//
// The front matter is decoded strictly: its fields are name, title,
// description, model, provider, system_prompt, input, output, tools,
// thinking, thinking_budget and max_tokens; any other field is an error.
// input and output are JSON Schemas written in YAML; they are checked as
// the toolkit checks every tool's schemas (no $ref cycle, bounded size and
// depth: see the guide docs/toolkit.md, "Untrusted schemas") and resolved here, and
// the template is parsed, so a broken prompt fails at Read.
//
// The name is the front matter's name or, failing that, the base name
// without extension of the file r reads (when r has a Name method, as
// *os.File does); it must be a valid identifier. The title is the front
// matter's title or the body's first "# Heading"; it must be at least
// MinTitleLength characters. A prompt with neither is an error.
//
// Files may use CRLF line endings and may be UTF-8 (with or without a byte
// order mark), UTF-16 or Latin-1; the text is converted to UTF-8. An empty
// body is allowed: such a prompt sends its input itself as the user
// message (see Agent.Render).
//
// Errors wrap ErrBadParameter and name the file or the prompt.
func Read(r io.Reader) (*Agent, error) {
	file := ""
	if n, ok := r.(interface{ Name() string }); ok {
		file = n.Name()
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errs.ErrBadParameter, label(file, ""), err)
	}
	return parseAgent(file, filepath.Base(file), data)
}

// ReadFile reads the prompt file at path; see Read.
func ReadFile(path string) (*Agent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	return Read(f)
}

// ReadFS reads the prompt file at name in fsys; see Read. The prompt's
// default name comes from name's last element.
func ReadFS(fsys fs.FS, name string) (*Agent, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, openError(name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errs.ErrBadParameter, label(name, ""), err)
	}
	return parseAgent(name, path.Base(name), data)
}

func openError(file string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s: %w", errs.ErrNotFound, label(file, ""), err)
	}
	return fmt.Errorf("%w: %s: %w", errs.ErrBadParameter, label(file, ""), err)
}

// label names what an error is about: the file when known, else the
// prompt.
func label(file, name string) string {
	switch {
	case file != "":
		return fmt.Sprintf("prompt file %q", file)
	case name != "":
		return fmt.Sprintf("prompt %q", name)
	}
	return "prompt"
}

// parseAgent builds an Agent from the bytes of a prompt file. file is used in
// errors; base, the file's base name, supplies the default name.
func parseAgent(file, base string, data []byte) (a *Agent, err error) {
	name := ""
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w: %s: %s", errs.ErrBadParameter, label(file, name), err)
		}
	}()
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileSize)
	}
	text := resource.DecodeText(data)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")

	fmText, body, hasFM, err := frontmatter.Split(text)
	if err != nil {
		return nil, err
	}
	fm := new(frontMatter)
	if hasFM {
		if fm, err = parseFrontMatter(fmText); err != nil {
			return nil, err
		}
	}

	a = &Agent{
		file:        file,
		description: strings.TrimSpace(fm.Description),
		model:       strings.TrimSpace(fm.Model),
		provider:    strings.TrimSpace(fm.Provider),
		system:      strings.TrimSpace(fm.SystemPrompt),
		thinking:    fm.Thinking,
		body:        strings.TrimSpace(body),
	}

	// Name.
	name = strings.TrimSpace(fm.Name)
	if name == "" && base != "" && base != "." && base != "/" {
		name = strings.TrimSuffix(base, filepath.Ext(base))
		if !names.IsIdent(name) {
			return nil, fmt.Errorf(`name %q taken from the file name is not an identifier: set "name" in the front matter or rename the file`, name)
		}
	}
	if name == "" {
		return nil, errors.New(`no name: set "name" in the front matter`)
	}
	if !names.IsIdent(name) {
		return nil, fmt.Errorf("name %q: want letters, digits and underscores, not starting with a digit, at most %d characters", name, names.MaxName)
	}
	if names.IsReservedName(name) {
		return nil, fmt.Errorf("name %q is reserved", name)
	}
	a.name = name

	// Title.
	title, from := strings.TrimSpace(fm.Title), "title"
	if title == "" {
		title, from = heading(a.body), "heading"
	}
	switch {
	case title == "":
		return nil, errors.New(`no title: set "title" in the front matter or start the body with a "# Heading"`)
	case strings.ContainsAny(title, "\n"):
		return nil, errors.New("title must be a single line")
	case utf8.RuneCountInString(title) < MinTitleLength:
		return nil, fmt.Errorf("%s %q is shorter than %d characters", from, title, MinTitleLength)
	}
	a.title = title

	// Limits.
	if fm.ThinkingBudget != nil {
		if *fm.ThinkingBudget < 0 {
			return nil, fmt.Errorf("thinking_budget %d is negative", *fm.ThinkingBudget)
		}
		if *fm.ThinkingBudget > 0 && !fm.Thinking {
			return nil, errors.New("thinking_budget is set but thinking is not true")
		}
		a.thinkingBudget = *fm.ThinkingBudget
	}
	if fm.MaxTokens != nil {
		if *fm.MaxTokens <= 0 {
			return nil, fmt.Errorf("max_tokens %d must be positive", *fm.MaxTokens)
		}
		a.maxTokens = *fm.MaxTokens
	}

	// Tools.
	for _, t := range fm.Tools {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return nil, errors.New("tools: empty tool name")
		case strings.IndexFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
			return nil, fmt.Errorf("tools: tool name %q contains white space or control characters", t)
		case slices.Contains(a.tools, t):
			return nil, fmt.Errorf("tools: %q listed twice", t)
		}
		a.tools = append(a.tools, t)
	}

	// Schemas.
	in, err := schemaFromYAML("input", &fm.Input)
	if err != nil {
		return nil, err
	}
	a.input, a.inputResolved, a.inputPlan = in.s, in.rs, in.plan
	out, err := schemaFromYAML("output", &fm.Output)
	if err != nil {
		return nil, err
	}
	a.output = out.s

	// Template.
	if a.body != "" {
		if a.tmpl, err = parseTemplate(name, a.body); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// heading returns the text of the first level-one ATX heading ("# Title")
// of a markdown body, outside fenced code blocks, or "".
func heading(body string) string {
	fence := ""
	for line := range strings.Lines(body) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			continue // indented code
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if trimmed == "#" {
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, "# "); ok {
			rest = strings.TrimSpace(rest)
			// Drop an optional closing sequence of '#'.
			if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ")) {
				rest = strings.TrimSpace(t)
			}
			return rest
		}
	}
	return ""
}
