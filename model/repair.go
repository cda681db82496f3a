package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
)

// Repairs Repair can make, as reported in its result.
const (
	RepairEmpty        = "empty arguments read as {}"
	RepairFence        = "removed code fence"
	RepairTrailing     = "removed trailing comma"
	RepairMissingComma = "inserted missing comma"
	RepairSingleQuote  = "converted single-quoted string"
	RepairBareKey      = "quoted bare key"
	RepairPython       = "converted Python literal"
	RepairComment      = "removed comment"
	RepairNumber       = "normalized number"
	RepairEscape       = "fixed string escape"
	RepairControl      = "escaped control character"
	RepairUnterminated = "closed unterminated input"
)

// maxRepairDepth bounds the nesting Repair accepts.
const maxRepairDepth = 512

// Repair mends a tool-call argument string that is almost JSON and returns
// valid JSON with the list of repairs made (in the order first made).
// Valid JSON is returned unchanged with no repairs. It mends: an empty or
// blank string ({}), a ```json code fence around the value, trailing
// commas, missing commas between members or elements, single-quoted
// strings, unquoted keys, Python's True/False/None, // and /* */ comments,
// numbers JSON does not allow (+1, .5, 1.), bad escapes and raw control
// characters in strings, and input cut off before its closing quotes and
// brackets. Anything else is an error wrapping ErrBadParameter; Repair
// never panics, and when it returns no error its output is valid JSON.
func Repair(args string) (string, []string, error) {
	if json.Valid([]byte(args)) {
		return args, nil, nil
	}
	p := repairer{}
	s := strings.Trim(args, jsonSpace)
	if s == "" {
		return "{}", []string{RepairEmpty}, nil
	}
	if inner, ok := stripFence(s); ok {
		p.note(RepairFence)
		s = strings.Trim(inner, jsonSpace)
		if s == "" {
			p.note(RepairEmpty)
			return "{}", p.notes, nil
		}
		if json.Valid([]byte(s)) {
			return s, p.notes, nil
		}
	}
	p.in = s
	if err := p.value(0); err != nil {
		return "", nil, fmt.Errorf("%w: arguments are not JSON: %v", errs.ErrBadParameter, err)
	}
	p.space()
	if p.pos < len(p.in) {
		return "", nil, fmt.Errorf("%w: arguments are not JSON: unexpected %q at offset %d after the value", errs.ErrBadParameter, p.peek(), p.pos)
	}
	out := p.out.String()
	if !json.Valid([]byte(out)) {
		return "", nil, fmt.Errorf("%w: arguments are not JSON and could not be repaired", errs.ErrBadParameter)
	}
	return out, p.notes, nil
}

// stripFence removes a Markdown code fence: ```lang\n...\n```. The closing
// fence may be missing.
func stripFence(s string) (string, bool) {
	if !strings.HasPrefix(s, "```") {
		return s, false
	}
	s = s[3:]
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		// One line: ```{...}``` or ```json {...}```.
		s = strings.TrimPrefix(s, "json")
	} else if lang := strings.TrimSpace(s[:nl]); lang == "" || isWord(lang) {
		s = s[nl+1:]
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, "```")
	return s, true
}

func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) && s[i] != '-' && s[i] != '_' {
			return false
		}
	}
	return true
}

type repairer struct {
	in    string
	pos   int
	out   bytes.Buffer
	notes []string
}

func (p *repairer) note(n string) {
	for _, x := range p.notes {
		if x == n {
			return
		}
	}
	p.notes = append(p.notes, n)
}

func (p *repairer) peek() byte {
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

// space skips white space and comments.
func (p *repairer) space() {
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.in) && p.in[p.pos+1] == '/':
			p.note(RepairComment)
			for p.pos < len(p.in) && p.in[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.in) && p.in[p.pos+1] == '*':
			p.note(RepairComment)
			end := strings.Index(p.in[p.pos+2:], "*/")
			if end < 0 {
				p.pos = len(p.in)
			} else {
				p.pos += 2 + end + 2
			}
		default:
			return
		}
	}
}

func (p *repairer) value(depth int) error {
	if depth > maxRepairDepth {
		return fmt.Errorf("nested deeper than %d", maxRepairDepth)
	}
	p.space()
	if p.pos >= len(p.in) {
		return fmt.Errorf("missing value at end of input")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"' || c == '\'':
		return p.str()
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		return p.number()
	case isLetter(c) || c == '_' || c == '$':
		w := p.word()
		switch w {
		case "true", "false", "null":
			p.out.WriteString(w)
		case "True", "False", "None":
			p.note(RepairPython)
			p.out.WriteString(map[string]string{"True": "true", "False": "false", "None": "null"}[w])
		default:
			return fmt.Errorf("unexpected word %q at offset %d", w, p.pos-len(w))
		}
		return nil
	default:
		return fmt.Errorf("unexpected %q at offset %d", c, p.pos)
	}
}

// word reads an identifier-like run.
func (p *repairer) word() string {
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '$' && c != '-' {
			break
		}
		p.pos++
	}
	return p.in[start:p.pos]
}

func (p *repairer) object(depth int) error {
	return p.sequence('{', '}', func() (bool, error) { return p.member(depth) })
}

func (p *repairer) array(depth int) error {
	return p.sequence('[', ']', func() (bool, error) { return false, p.value(depth + 1) })
}

// sequence reads an object or an array from its opening byte to its
// closing one, mending missing, doubled and trailing commas and a missing
// end, and calls elem for each element. elem reports closed when it had to
// end the sequence itself (the input ran out inside a member).
func (p *repairer) sequence(open, close byte, elem func() (closed bool, err error)) error {
	p.pos++ // open
	p.out.WriteByte(open)
	first := true
	for {
		p.space()
		if p.pos >= len(p.in) {
			p.note(RepairUnterminated)
			p.out.WriteByte(close)
			return nil
		}
		c := p.in[p.pos]
		if c == close {
			p.pos++
			p.out.WriteByte(close)
			return nil
		}
		if c == ',' {
			p.pos++
			p.space()
			if first || p.pos >= len(p.in) || p.peek() == close || p.peek() == ',' {
				p.note(RepairTrailing)
				continue
			}
			p.out.WriteByte(',')
		} else if !first {
			p.note(RepairMissingComma)
			p.out.WriteByte(',')
		}
		closed, err := elem()
		if err != nil || closed {
			return err
		}
		first = false
	}
}

// member reads one "key": value of an object. A key may be quoted either
// way or bare; an input that ends before the value closes the object.
func (p *repairer) member(depth int) (closed bool, err error) {
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		if err := p.str(); err != nil {
			return false, err
		}
	case isLetter(c) || isDigit(c) || c == '_' || c == '$' || c == '-':
		w := p.word()
		p.note(RepairBareKey)
		p.out.WriteString(strconv.Quote(w))
	default:
		return false, fmt.Errorf("unexpected %q at offset %d where a key belongs", c, p.pos)
	}
	p.space()
	if p.pos >= len(p.in) {
		p.note(RepairUnterminated)
		p.out.WriteString(":null}")
		return true, nil
	}
	if p.in[p.pos] != ':' {
		return false, fmt.Errorf("missing ':' at offset %d", p.pos)
	}
	p.pos++
	p.out.WriteByte(':')
	p.space()
	if p.pos >= len(p.in) {
		p.note(RepairUnterminated)
		p.out.WriteString("null}")
		return true, nil
	}
	return false, p.value(depth + 1)
}

// str reads a double- or single-quoted string and writes it as a JSON
// string.
func (p *repairer) str() error {
	q := p.in[p.pos]
	if q == '\'' {
		p.note(RepairSingleQuote)
	}
	p.pos++
	var buf []rune
	for {
		if p.pos >= len(p.in) {
			p.note(RepairUnterminated)
			break
		}
		c := p.in[p.pos]
		if c == q {
			p.pos++
			break
		}
		if c == '\\' {
			p.pos++
			if p.pos >= len(p.in) {
				p.note(RepairUnterminated)
				break
			}
			e := p.in[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/', '\'':
				buf = append(buf, rune(e))
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					p.note(RepairEscape)
					buf = append(buf, '\\', 'u')
					continue
				}
				if utf16.IsSurrogate(r) && strings.HasPrefix(p.in[p.pos:], `\u`) {
					save := p.pos
					p.pos += 2
					if r2, ok := p.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							buf = append(buf, d)
							continue
						}
					}
					p.pos = save
				}
				buf = append(buf, r)
			default:
				p.note(RepairEscape)
				buf = append(buf, '\\')
				p.pos-- // keep the escaped byte as text
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(p.in[p.pos:])
		if r < 0x20 {
			p.note(RepairControl)
		}
		buf = append(buf, r)
		p.pos += size
	}
	b, err := json.Marshal(string(buf))
	if err != nil {
		return err
	}
	// json.Marshal escapes <, > and &; undo that to stay close to the input.
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	p.out.Write(b)
	return nil
}

func (p *repairer) hex4() (rune, bool) {
	if p.pos+4 > len(p.in) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.in[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// number reads a number, allowing a leading '+' or '.', and a trailing
// '.', and writes it in JSON form.
func (p *repairer) number() error {
	start := p.pos
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if !isDigit(c) && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		p.pos++
	}
	tok := p.in[start:p.pos]
	if json.Valid([]byte(tok)) {
		p.out.WriteString(tok)
		return nil
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return fmt.Errorf("bad number %q at offset %d", tok, start)
	}
	p.note(RepairNumber)
	p.out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}

// jsonSpace is the white space JSON allows between tokens.
const jsonSpace = " \t\r\n"
