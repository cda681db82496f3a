package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// skill is the Skill of New, Load and FromEntry: a checked front matter,
// a manifest, and a reader whose every answer is verified against it.
type skill struct {
	path  string
	fm    Frontmatter
	files []File // nil: dynamic
	read  func(ctx context.Context, f File) ([]byte, error)
	limit int64 // the bound of a dynamic skill's reads
}

func (s *skill) Path() string             { return s.path }
func (s *skill) Frontmatter() Frontmatter { return s.fm }
func (s *skill) Files() []File            { return s.files }

func (s *skill) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if s.files == nil {
		if err := checkPath(p); err != nil {
			return nil, err
		}
		data, err := s.read(ctx, File{Path: p, Size: -1})
		if err == nil && int64(len(data)) > s.limit {
			err = fmt.Errorf("%w: skill %q: %s is over %d bytes", errs.ErrIntegrity, s.path, p, s.limit)
		}
		if err != nil {
			return nil, err
		}
		return data, nil
	}
	i, ok := slices.BinarySearchFunc(s.files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return nil, fmt.Errorf("%w: skill %q has no file %.200q", errs.ErrNotFound, s.path, p)
	}
	f := s.files[i]
	data, err := s.read(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", s.path, err)
	}
	if err := Verify(f, data); err != nil {
		return nil, fmt.Errorf("skill %q: %w", s.path, err)
	}
	return data, nil
}

// New returns a skill held in memory: md is its SKILL.md, files its
// supporting files by path. The skill's path is its name. It fails,
// wrapping ErrBadParameter, on a front matter the Agent Skills
// specification refuses, a bad file path, or past DefaultLimits.
func New(md []byte, files map[string][]byte) (Skill, error) {
	fm, _, err := Parse(md, Limits{})
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{FileName: md}
	for p, b := range files {
		if err := checkPath(p); err != nil {
			return nil, fmt.Errorf("skill %q: %w", fm.Name, err)
		}
		if p == FileName {
			return nil, fmt.Errorf("%w: skill %q: %s is given as md", errs.ErrBadParameter, fm.Name, FileName)
		}
		data[p] = b
	}
	m := make([]File, 0, len(data))
	for p, b := range data {
		m = append(m, File{Path: p, Digest: Digest(b), Size: int64(len(b))})
	}
	s, err := build(fm.Name, fm, m, Limits{})
	if err != nil {
		return nil, err
	}
	s.read = func(_ context.Context, f File) ([]byte, error) { return data[f.Path], nil }
	return s, nil
}

// build checks a manifest against lim and returns the skill of it,
// without its reader.
func build(p string, fm Frontmatter, files []File, lim Limits) (*skill, error) {
	lim = lim.orDefault()
	if len(files) > lim.MaxFiles {
		return nil, fmt.Errorf("%w: skill %q: %d files, more than %d", errs.ErrBadParameter, p, len(files), lim.MaxFiles)
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var total int64
	hasMD := false
	for i, f := range files {
		if err := checkPath(f.Path); err != nil {
			return nil, fmt.Errorf("skill %q: %w", p, err)
		}
		if i > 0 && files[i-1].Path == f.Path {
			return nil, fmt.Errorf("%w: skill %q: file %q listed twice", errs.ErrBadParameter, p, f.Path)
		}
		if !validDigest(f.Digest) || f.Size < 0 {
			return nil, fmt.Errorf("%w: skill %q: file %q: want a digest of the form sha256:<64 lowercase hex> and a size", errs.ErrBadParameter, p, f.Path)
		}
		if total += f.Size; total > lim.MaxBytes {
			return nil, fmt.Errorf("%w: skill %q: over %d bytes of files", errs.ErrBadParameter, p, lim.MaxBytes)
		}
		hasMD = hasMD || f.Path == FileName
	}
	if !hasMD && files != nil {
		return nil, fmt.Errorf("%w: skill %q: the manifest lacks %s", errs.ErrBadParameter, p, FileName)
	}
	return &skill{path: p, fm: fm, files: files, limit: lim.MaxBytes}, nil
}

// validDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Load reads the skill in directory dir of fsys (the Agent Skills layout:
// SKILL.md at its root, supporting files below), digesting every file.
// The directory's name must be the skill's name. Symbolic links and
// anything but directories and regular files are refused, as are skills
// past lim, which are refused from the directory's listing before their
// files are read. Later reads go through fsys again and are verified
// against the digests taken here, so a file changed since fails wrapping
// ErrIntegrity. Errors name the skill's directory.
func Load(fsys fs.FS, dir string, lim Limits) (Skill, error) {
	lim = lim.orDefault()
	name := path.Base(dir)
	var files []File
	var total int64
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := strings.TrimPrefix(p, dir+"/")
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s is a symbolic link", errs.ErrBadParameter, rel)
		case !t.IsRegular():
			return fmt.Errorf("%w: %s is not a regular file", errs.ErrBadParameter, rel)
		}
		if len(files) >= lim.MaxFiles {
			return fmt.Errorf("%w: more than %d files", errs.ErrBadParameter, lim.MaxFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > lim.MaxBytes {
			return fmt.Errorf("%w: over %d bytes of files", errs.ErrBadParameter, lim.MaxBytes)
		}
		files = append(files, File{Path: rel, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", dir, err)
	}
	read := func(_ context.Context, f File) ([]byte, error) {
		file, err := fsys.Open(path.Join(dir, f.Path))
		if err != nil {
			return nil, err
		}
		defer file.Close()
		return io.ReadAll(io.LimitReader(file, f.Size+1))
	}
	// Digest the files, reading each within its listed size.
	var md []byte
	for i, f := range files {
		file, err := fsys.Open(path.Join(dir, f.Path))
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", dir, err)
		}
		h := sha256.New()
		var keep io.Writer = h
		if f.Path == FileName {
			md = make([]byte, 0, f.Size)
			keep = io.MultiWriter(h, (*appender)(&md))
		}
		n, err := io.Copy(keep, io.LimitReader(file, f.Size+1))
		file.Close()
		if err == nil && n != f.Size {
			err = fmt.Errorf("%w: %s changed while it was read", errs.ErrIntegrity, f.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", dir, err)
		}
		files[i].Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	if md == nil {
		return nil, fmt.Errorf("%w: skill %q: no %s", errs.ErrBadParameter, dir, FileName)
	}
	fm, _, err := Parse(md, lim)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", dir, err)
	}
	if fm.Name != name {
		return nil, fmt.Errorf("%w: skill %q: the front matter names it %q: a skill's name must be its directory's", errs.ErrBadParameter, dir, fm.Name)
	}
	s, err := build(name, fm, files, lim)
	if err != nil {
		return nil, err
	}
	s.read = read
	return s, nil
}

// appender is a writer that appends to a byte slice.
type appender []byte

func (a *appender) Write(p []byte) (int, error) { *a = append(*a, p...); return len(p), nil }
