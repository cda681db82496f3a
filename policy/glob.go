package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llmkit/toolkit"
)

// maxPattern bounds the length of a glob pattern, so that matching stays
// cheap whatever the configuration says.
const maxPattern = 256

// glob is a compiled glob pattern: '*' matches any run of characters
// (empty included, '/' and '.' included), '?' any one character, and '\'
// makes the next character literal. Everything else matches itself.
type glob struct {
	kind   globKind
	lit    string  // globExact, globPrefix, globSuffix: the literal part
	tokens []token // globGeneral
}

type globKind uint8

const (
	globAny globKind = iota
	globExact
	globPrefix // lit*
	globSuffix // *lit
	globGeneral
)

// token is one element of a general pattern: a literal rune, '?' or '*'.
type token struct {
	r    rune
	kind uint8 // 0 literal, 1 '?', 2 '*'
}

// compileGlob compiles pattern p. The empty pattern matches only the
// empty string.
func compileGlob(p string) (glob, error) {
	if len(p) > maxPattern {
		return glob{}, fmt.Errorf("%w: pattern %q…: longer than %d bytes", toolkit.ErrBadParameter, p[:32], maxPattern)
	}
	if !utf8.ValidString(p) {
		return glob{}, fmt.Errorf("%w: pattern %q is not UTF-8", toolkit.ErrBadParameter, p)
	}
	var toks []token
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch r {
		case '*':
			if n := len(toks); n > 0 && toks[n-1].kind == 2 {
				continue // "**" is "*"
			}
			toks = append(toks, token{kind: 2})
		case '?':
			toks = append(toks, token{kind: 1})
		case '\\':
			if i == len(p) {
				return glob{}, fmt.Errorf("%w: pattern %q ends with an escape (\\)", toolkit.ErrBadParameter, p)
			}
			r, size = utf8.DecodeRuneInString(p[i:])
			i += size
			toks = append(toks, token{r: r})
		default:
			toks = append(toks, token{r: r})
		}
	}
	return classify(toks), nil
}

// classify picks the fastest matcher for a token list.
func classify(toks []token) glob {
	stars, others := 0, 0
	for _, t := range toks {
		switch t.kind {
		case 2:
			stars++
		case 1:
			others++
		}
	}
	literal := func(ts []token) string {
		var b strings.Builder
		for _, t := range ts {
			b.WriteRune(t.r)
		}
		return b.String()
	}
	n := len(toks)
	switch {
	case others > 0 || stars > 1:
		return glob{kind: globGeneral, tokens: toks}
	case stars == 0:
		return glob{kind: globExact, lit: literal(toks)}
	case n == 1:
		return glob{kind: globAny}
	case toks[n-1].kind == 2:
		return glob{kind: globPrefix, lit: literal(toks[:n-1])}
	case toks[0].kind == 2:
		return glob{kind: globSuffix, lit: literal(toks[1:])}
	}
	return glob{kind: globGeneral, tokens: toks}
}

// match reports whether s matches g.
func (g *glob) match(s string) bool {
	switch g.kind {
	case globAny:
		return true
	case globExact:
		return s == g.lit
	case globPrefix:
		return strings.HasPrefix(s, g.lit)
	case globSuffix:
		return strings.HasSuffix(s, g.lit)
	}
	return matchTokens(g.tokens, s)
}

// matchTokens matches s against a general pattern, backtracking only to
// the last '*' (linear in practice, O(len(p)·len(s)) at worst, both
// bounded).
func matchTokens(toks []token, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		r, size := utf8.DecodeRuneInString(s[si:])
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case 2:
				starT, starS = ti, si
				ti++
				continue
			case 1:
				ti++
				si += size
				continue
			default:
				if t.r == r {
					ti++
					si += size
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		// Let the last '*' take one more character.
		_, size = utf8.DecodeRuneInString(s[starS:])
		starS += size
		ti, si = starT+1, starS
	}
	for ti < len(toks) && toks[ti].kind == 2 {
		ti++
	}
	return ti == len(toks)
}

// globs is a compiled list of patterns; a value matches when it matches
// any of them, and every value matches an empty list.
type globs []glob

// compileGlobs compiles patterns, naming the field in errors.
func compileGlobs(field string, patterns []string) (globs, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	out := make(globs, 0, len(patterns))
	for i, p := range patterns {
		g, err := compileGlob(p)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// match reports whether s matches any pattern (true for none).
func (gs globs) match(s string) bool {
	if len(gs) == 0 {
		return true
	}
	for i := range gs {
		if gs[i].match(s) {
			return true
		}
	}
	return false
}
