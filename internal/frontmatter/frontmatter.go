// Package frontmatter splits a markdown file into its YAML front matter
// and its body, for the packages that read such files (prompt, skill).
package frontmatter

import (
	"errors"
	"strings"
)

// Split separates the YAML front matter from the body of a markdown
// file whose line endings are already "\n". The front matter is returned
// with one leading empty line per line before it, so YAML error line
// numbers are line numbers of the file. ok reports whether the file has
// front matter at all: a first line of "---".
func Split(text string) (fm, body string, ok bool, err error) {
	first, rest, found := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return "", text, false, nil
	}
	if !found {
		return "", "", true, errors.New(`front matter opened by "---" on line 1 is never closed by a "---" line`)
	}
	for pos := 0; pos <= len(rest); {
		end := strings.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		next := len(rest) + 1
		if end >= 0 {
			line = rest[pos : pos+end]
			next = pos + end + 1
		}
		if l := strings.TrimRight(line, " \t"); l == "---" || l == "..." {
			body := ""
			if next <= len(rest) {
				body = rest[next:]
			}
			return "\n" + rest[:pos], body, true, nil
		}
		pos = next
	}
	return "", "", true, errors.New(`front matter opened by "---" on line 1 is never closed by a "---" line`)
}
