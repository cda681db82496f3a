package resource

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
)

// Limits on URI templates. They keep parsing and matching cheap whatever a
// remote server sends.
const (
	// MaxURITemplateLen is the longest URI template accepted, in bytes.
	MaxURITemplateLen = 8 << 10
	// MaxURITemplateVars is the most variables one URI template may hold.
	MaxURITemplateVars = 64
)

// maxMatchWork bounds the work of one Match (roughly, bytes examined). A
// template whose expressions can split a URI in many ways could otherwise
// make matching slow; past the bound the URI does not match.
const maxMatchWork = 1 << 20

// URITemplate is a parsed RFC 6570 URI template, as MCP resource templates
// use them. Every operator of level 3 is supported — {var}, {+var},
// {#var}, {.var}, {/var}, {;var}, {?var} and {&var}, each with a list of
// variables — and so are the level 4 modifiers {var:3} and {var*}.
// Variables hold strings (lists and maps of level 4 have no use for
// resource URIs). A URITemplate is immutable and safe for concurrent use.
//
// Match is the inverse of Expand. When an expression could split a URI in
// several ways, the first variable takes as much as it can. Query-style
// expressions ({?a,b}, {&a}, {;a}) accept their variables in any order.
// Values of {var}, {.var}, {/var}, {;var}, {?var} and {&var} are
// percent-decoded; values of {+var} and {#var} are returned as they appear
// in the URI, because reserved expansion passes percent-encoded triplets
// through unchanged and decoding would lose the difference. A prefix
// modifier ({var:3}) bounds the decoded length of a matched value, except
// for {+var:3} and {#var:3}, whose raw values are not checked. A variable
// that appears more than once takes the value of its first occurrence, and
// the URI matches only when that value expands to exactly the URI at every
// occurrence; such templates are rare, and matching them is best effort
// (ambiguous splits are not all tried). Matching gives up, reporting no
// match, past a fixed amount of work, so a hostile template cannot make it
// slow.
type URITemplate struct {
	raw      string
	parts    []tmplPart
	repeated bool // a variable appears more than once
}

// tmplPart is a literal (op 0) or an expression.
type tmplPart struct {
	lit  string
	op   byte // 0 literal, 's' simple, or one of "+#./;?&"
	vars []tmplVar
}

type tmplVar struct {
	name    string
	prefix  int // 0: none
	explode bool
}

// tmplOp describes the expansion of an operator (RFC 6570, appendix A).
type tmplOp struct {
	first, sep string
	named      bool
	ifemp      string
	reserved   bool // U+R: reserved characters and pct-encoded triplets pass
}

func opInfo(op byte) tmplOp {
	switch op {
	case '+':
		return tmplOp{sep: ",", reserved: true}
	case '#':
		return tmplOp{first: "#", sep: ",", reserved: true}
	case '.':
		return tmplOp{first: ".", sep: "."}
	case '/':
		return tmplOp{first: "/", sep: "/"}
	case ';':
		return tmplOp{first: ";", sep: ";", named: true}
	case '?':
		return tmplOp{first: "?", sep: "&", named: true, ifemp: "="}
	case '&':
		return tmplOp{first: "&", sep: "&", named: true, ifemp: "="}
	}
	return tmplOp{sep: ","}
}

// ParseURITemplate parses an RFC 6570 URI template for a resource. Resource
// URIs are absolute, so the template must start with a literal scheme and
// ':' ("file:///{+path}", not "{+uri}"). It refuses, with an error wrapping
// toolkit.ErrBadParameter that names the template, a syntax error (an
// unclosed or empty expression, a reserved operator, an invalid variable
// name or modifier, a character RFC 6570 does not allow in a literal,
// invalid UTF-8), a template longer than [MaxURITemplateLen] bytes and more
// than [MaxURITemplateVars] variables.
func ParseURITemplate(s string) (*URITemplate, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: resource template %.200q: %s", errs.ErrBadParameter, s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return nil, bad("empty URI template")
	}
	if len(s) > MaxURITemplateLen {
		return nil, bad("%d bytes is longer than %d", len(s), MaxURITemplateLen)
	}
	if !utf8.ValidString(s) {
		return nil, bad("invalid UTF-8")
	}
	t := &URITemplate{raw: s}
	seen := map[string]bool{}
	nvars := 0
	lit := 0 // start of the current literal
	flush := func(end int) {
		if end > lit {
			t.parts = append(t.parts, tmplPart{lit: s[lit:end]})
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			j := strings.IndexByte(s[i+1:], '}')
			if j < 0 {
				return nil, bad("unclosed expression at byte %d", i)
			}
			body := s[i+1 : i+1+j]
			if k := strings.IndexByte(body, '{'); k >= 0 {
				return nil, bad("'{' inside an expression at byte %d", i+1+k)
			}
			p, err := parseExpr(body)
			if err != nil {
				return nil, bad("expression at byte %d: %v", i, err)
			}
			for _, v := range p.vars {
				if seen[v.name] {
					t.repeated = true
				}
				seen[v.name] = true
			}
			nvars += len(p.vars)
			if nvars > MaxURITemplateVars {
				return nil, bad("more than %d variables", MaxURITemplateVars)
			}
			flush(i)
			t.parts = append(t.parts, p)
			i += j + 2
			lit = i
		case c == '}':
			return nil, bad("unmatched '}' at byte %d", i)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return nil, bad("'%%' not followed by two hex digits at byte %d", i)
			}
			i += 3
		case c < 0x80 && !literalByte(c):
			return nil, bad("character %q not allowed at byte %d", c, i)
		default:
			i++
		}
	}
	flush(len(s))
	if !t.absolute() {
		return nil, bad("not absolute: want a literal scheme and ':' first, such as file:// or mem:")
	}
	return t, nil
}

// absolute reports whether the template starts with a literal scheme and
// a colon.
func (t *URITemplate) absolute() bool {
	if len(t.parts) == 0 || t.parts[0].op != 0 {
		return false
	}
	lit := t.parts[0].lit
	colon := strings.IndexByte(lit, ':')
	return colon > 0 && names.IsScheme(lit[:colon])
}

// literalByte reports whether an ASCII byte may appear in a template
// literal (RFC 6570, section 2.1).
func literalByte(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return false
	}
	switch c {
	case '"', '\'', '<', '>', '\\', '^', '`', '|':
		return false
	}
	return true
}

// parseExpr parses the inside of an expression.
func parseExpr(body string) (tmplPart, error) {
	if body == "" {
		return tmplPart{}, fmt.Errorf("empty expression")
	}
	p := tmplPart{op: 's'}
	switch body[0] {
	case '+', '#', '.', '/', ';', '?', '&':
		p.op = body[0]
		body = body[1:]
	case '=', ',', '!', '@', '|':
		return tmplPart{}, fmt.Errorf("reserved operator %q", body[0])
	}
	for spec := range strings.SplitSeq(body, ",") {
		v := tmplVar{name: spec}
		if n, ok := strings.CutSuffix(spec, "*"); ok {
			v.name, v.explode = n, true
		} else if n, max, ok := strings.Cut(spec, ":"); ok {
			if max == "" || len(max) > 4 || max[0] == '0' {
				return tmplPart{}, fmt.Errorf("variable %q: prefix length must be 1 to 9999", n)
			}
			l, err := strconv.Atoi(max)
			if err != nil || l < 1 {
				return tmplPart{}, fmt.Errorf("variable %q: prefix length must be 1 to 9999", n)
			}
			v.name, v.prefix = n, l
		}
		if !validVarName(v.name) {
			return tmplPart{}, fmt.Errorf("invalid variable name %q", v.name)
		}
		p.vars = append(p.vars, v)
	}
	return p, nil
}

// validVarName checks varname = varchar *( ["."] varchar ), varchar = ALPHA
// / DIGIT / "_" / pct-encoded.
func validVarName(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_':
		case c == '.':
			if s[i+1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isReserved(c byte) bool {
	return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}

// String returns the template as it was parsed.
func (t *URITemplate) String() string { return t.raw }

// Expand returns the URI the template gives for vars (RFC 6570, section
// 3). A variable missing from vars is undefined and expands to nothing; an
// empty string is defined.
func (t *URITemplate) Expand(vars map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.op == 0 {
			b.WriteString(p.lit)
			continue
		}
		inf := opInfo(p.op)
		first := true
		for _, v := range p.vars {
			val, ok := vars[v.name]
			if !ok {
				continue
			}
			if first {
				b.WriteString(inf.first)
				first = false
			} else {
				b.WriteString(inf.sep)
			}
			if v.prefix > 0 {
				val = prefixRunes(val, v.prefix)
			}
			if inf.named {
				b.WriteString(v.name)
				if val == "" {
					b.WriteString(inf.ifemp)
					continue
				}
				b.WriteByte('=')
			}
			encodeValue(&b, val, inf.reserved)
		}
	}
	return b.String()
}

// prefixRunes returns the first n characters of s (an invalid byte counts
// as one).
func prefixRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

// encodeValue writes s percent-encoded: everything but unreserved
// characters, and with reserved set also reserved characters and existing
// pct-encoded triplets, becomes %XX.
func encodeValue(b *strings.Builder, s string, reserved bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c), reserved && isReserved(c):
			b.WriteByte(c)
		case reserved && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// Match reports whether uri is an expansion of the template and returns
// the values of the variables it defines (see the type's documentation for
// how values are decoded). Variables the URI leaves undefined are absent
// from the map. Match never panics, whatever uri holds.
func (t *URITemplate) Match(uri string) (map[string]string, bool) {
	vars, ok, _ := t.match(uri)
	return vars, ok
}

// match is Match also reporting whether it gave up because the work bound
// was reached.
func (t *URITemplate) match(uri string) (vars map[string]string, ok, exhausted bool) {
	m := matcher{t: t, uri: uri, vals: map[string]string{}, work: maxMatchWork}
	if !t.repeated {
		// Without repeated variables, whether the rest of the template
		// matches from a position does not depend on earlier choices.
		m.failed = map[int]bool{}
	}
	if !m.match(0, 0) {
		return nil, false, m.work <= 0
	}
	return m.vals, true, false
}

type matcher struct {
	t      *URITemplate
	uri    string
	vals   map[string]string // defined variables bound so far
	failed map[int]bool      // part*(len(uri)+1)+pos → no match from there
	work   int
}

func (m *matcher) match(i, pos int) bool {
	parts := m.t.parts
	if i == len(parts) {
		if pos != len(m.uri) {
			return false
		}
		if !m.t.repeated {
			return true
		}
		// A repeated variable took the value of its first occurrence:
		// the others must agree, which the expansion shows.
		m.work -= len(m.uri)
		return m.t.Expand(m.vals) == m.uri
	}
	if m.work <= 0 {
		return false
	}
	memo := i*(len(m.uri)+1) + pos
	if m.failed != nil && m.failed[memo] {
		return false
	}
	p := parts[i]
	rest := m.uri[pos:]
	if p.op == 0 {
		m.work -= len(p.lit)
		if strings.HasPrefix(rest, p.lit) && m.match(i+1, pos+len(p.lit)) {
			return true
		}
		m.fail(memo)
		return false
	}
	inf := opInfo(p.op)
	hi := pos + extent(rest, inf)
	m.work -= 1 + hi - pos
	lo := pos
	if i+1 == len(parts) {
		// The last expression must reach the end of the URI.
		if hi != len(m.uri) {
			m.fail(memo)
			return false
		}
		lo = hi
	}
	var next string // the literal after the expression, if any
	if i+1 < len(parts) && parts[i+1].op == 0 {
		next = parts[i+1].lit
	}
	for end := hi; end >= lo; end-- {
		if next != "" && !strings.HasPrefix(m.uri[end:], next) {
			m.work -= len(next)
			if m.work <= 0 {
				return false
			}
			continue
		}
		m.work -= 1 + end - pos
		if m.work <= 0 {
			return false
		}
		undo, ok := m.bind(p, inf, m.uri[pos:end])
		if ok && m.match(i+1, end) {
			return true
		}
		for _, name := range undo {
			delete(m.vals, name)
		}
	}
	m.fail(memo)
	return false
}

func (m *matcher) fail(memo int) {
	if m.failed != nil && m.work > 0 {
		m.failed[memo] = true
	}
}

// extent returns how many leading bytes of s an expression of the
// operator inf could span.
func extent(s string, inf tmplOp) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c), c == '%':
		case inf.reserved && isReserved(c):
		case strings.IndexByte(inf.first, c) >= 0, strings.IndexByte(inf.sep, c) >= 0:
		case inf.named && c == '=':
		default:
			return i
		}
	}
	return len(s)
}

// bind assigns the variables of expression p from seg, its expansion. It
// returns the names it bound (to undo on backtracking) and whether seg is
// a valid expansion. A variable already bound keeps its value (only
// templates with repeated variables bind a name twice; match then checks
// the whole expansion). A variable seg leaves out stays unbound: it is
// undefined unless another occurrence defines it.
func (m *matcher) bind(p tmplPart, inf tmplOp, seg string) (undo []string, ok bool) {
	set := func(v tmplVar, val string) bool {
		if v.prefix > 0 && !inf.reserved && utf8.RuneCountInString(val) > v.prefix {
			return false
		}
		if _, ok := m.vals[v.name]; !ok {
			m.vals[v.name] = val
			undo = append(undo, v.name)
		}
		return true
	}
	fail := func() ([]string, bool) {
		for _, name := range undo {
			delete(m.vals, name)
		}
		return nil, false
	}
	if seg == "" {
		return nil, true // every variable undefined (or, with first "", the first empty)
	}
	rest, found := strings.CutPrefix(seg, inf.first)
	if !found {
		return nil, false
	}
	pieces := strings.Split(rest, inf.sep)
	if inf.named {
		var used [MaxURITemplateVars]bool
		for _, piece := range pieces {
			name, raw, _ := strings.Cut(piece, "=")
			k := -1
			for j, v := range p.vars {
				if !used[j] && v.name == name {
					k = j
					break
				}
			}
			if k < 0 {
				return fail()
			}
			used[k] = true
			val, ok := decodeValue(raw, false)
			if !ok || !set(p.vars[k], val) {
				return fail()
			}
		}
		return undo, true
	}
	if n := len(p.vars); len(pieces) > n {
		// The separator may belong to the last value ({.a} and reserved
		// expansion leave it unencoded); decoding refuses it otherwise.
		pieces[n-1] = strings.Join(pieces[n-1:], inf.sep)
		pieces = pieces[:n]
	}
	for j, piece := range pieces {
		val, ok := decodeValue(piece, inf.reserved)
		if !ok || !set(p.vars[j], val) {
			return fail()
		}
	}
	return undo, true
}

// decodeValue checks one expanded value. Without reserved it must consist
// of unreserved characters and pct-encoded triplets, which are decoded;
// with reserved, reserved characters may appear too and the value is
// returned as it is.
func decodeValue(s string, reserved bool) (string, bool) {
	escaped := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c), reserved && isReserved(c):
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			escaped = true
			i += 2
		default:
			return "", false
		}
	}
	if reserved || !escaped {
		return s, true
	}
	return pctDecode(s), true
}

// pctDecode decodes the pct-encoded triplets of s and keeps everything
// else.
func pctDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}
