package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// FileName is the name of the file every skill holds at its root.
const FileName = "SKILL.md"

// ExtensionID is the MCP extension (SEP-2640) that serves skills.
const ExtensionID = "io.modelcontextprotocol/skills"

// Skill is one skill: its front matter, the manifest of its files and a
// way to read them. Implementations answer Frontmatter, Path and Files
// from memory; ReadFile may do I/O and must return exactly the bytes the
// manifest describes (New, Load and FromEntry verify them).
type Skill interface {
	// Path locates the skill within its source: '/'-separated segments
	// whose last is the skill's name ("pdf", "acme/billing/refunds").
	Path() string
	// Frontmatter returns the SKILL.md front matter, checked.
	Frontmatter() Frontmatter
	// Files returns the manifest: SKILL.md and every supporting file, in
	// path order; nil for a dynamic skill, whose files cannot be digested.
	Files() []File
	// ReadFile returns the content of the file at path (relative to the
	// skill's root, as in Files). A file the manifest does not list fails
	// wrapping ErrNotFound; content other than the manifest's wraps
	// ErrIntegrity.
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// File is one file of a skill's manifest.
type File struct {
	// Path is relative to the skill's root, '/'-separated ("SKILL.md",
	// "references/FORMS.md").
	Path string
	// Digest is "sha256:" and the 64 lowercase hex digits of the SHA-256
	// of the file's bytes.
	Digest string
	// Size is the file's length in bytes.
	Size int64
}

// Limits bound what a skill may hold. The zero value of a field means its
// default (DefaultLimits).
type Limits struct {
	// MaxFiles bounds the files of one skill, SKILL.md included (512).
	MaxFiles int
	// MaxBytes bounds the sum of a skill's file sizes (16 MiB).
	MaxBytes int64
	// MaxFrontmatter bounds the front matter of SKILL.md in bytes (64 KiB).
	MaxFrontmatter int
}

// DefaultLimits are the limits of SEP-2640 (512 files and 16 MiB a
// skill), with 64 KiB of front matter.
var DefaultLimits = Limits{MaxFiles: 512, MaxBytes: 16 << 20, MaxFrontmatter: 64 << 10}

// orDefault returns l with its zero fields set to their defaults.
func (l Limits) orDefault() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultLimits.MaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxFrontmatter <= 0 {
		l.MaxFrontmatter = DefaultLimits.MaxFrontmatter
	}
	return l
}

// Digest returns the manifest digest of data: "sha256:" and its SHA-256
// in lowercase hex.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Verify checks data against f: its size, then its digest. A mismatch
// wraps ErrIntegrity.
func Verify(f File, data []byte) error {
	if int64(len(data)) != f.Size {
		return fmt.Errorf("%w: %s: %d bytes, the manifest says %d", errs.ErrIntegrity, f.Path, len(data), f.Size)
	}
	if Digest(data) != f.Digest {
		return fmt.Errorf("%w: %s: its SHA-256 differs from the manifest's", errs.ErrIntegrity, f.Path)
	}
	return nil
}

// Name returns the skill's name: the last segment of its path.
func Name(s Skill) string {
	p := s.Path()
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Body reads s's SKILL.md and returns its instructions: the markdown
// after the front matter. The front matter read must equal the skill's
// (SEP-2640's front matter verification), or the error wraps
// ErrIntegrity.
func Body(ctx context.Context, s Skill) (string, error) {
	data, err := s.ReadFile(ctx, FileName)
	if err != nil {
		return "", err
	}
	fm, body, err := Parse(data, Limits{})
	if err != nil {
		return "", fmt.Errorf("skill %q: %w", s.Path(), err)
	}
	if !fm.equal(s.Frontmatter()) {
		return "", fmt.Errorf("%w: skill %q: the front matter of %s differs from the skill's entry", errs.ErrIntegrity, s.Path(), FileName)
	}
	return body, nil
}

// checkPath checks the path of a file within a skill: relative,
// '/'-separated, clean, without "." or ".." segments, backslashes or
// control characters, at most 1024 bytes.
func checkPath(p string) error {
	if p == "" || len(p) > 1024 || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("%w: file path %.80q: want a relative path of 1 to 1024 bytes", errs.ErrBadParameter, p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: file path %.80q: empty, \".\" or \"..\" segment", errs.ErrBadParameter, p)
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' || r == '\ufffd' {
			return fmt.Errorf("%w: file path %.80q: control character, backslash or invalid UTF-8", errs.ErrBadParameter, p)
		}
	}
	return nil
}
