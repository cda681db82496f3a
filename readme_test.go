package toolkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/readme"
)

// TestReadmeGoBlocksCompile compiles every Go block of README.md and of
// the guides under docs/ (whole programs as they are, fragments as the
// body of a function whose parameters the comment above them declares:
// see package internal/testing/readme), so the documentation never drifts
// from the API. A block that imports a module of its own (an adapter) is
// compiled by that module's readme_test.go, which this test checks is
// there.
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	blocks, err := readme.Docs(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md and docs/ have no Go block")
	}
	var here []readme.Block
	for _, b := range blocks {
		mod, err := b.Module(".")
		switch {
		case err != nil:
			t.Error(err)
		case mod == ".":
			here = append(here, b)
		default:
			if _, err := os.Stat(filepath.Join(mod, "readme_test.go")); err != nil {
				t.Errorf("%s:%d imports module %s, which has no readme_test.go to compile the block", b.File, b.Line, mod)
			}
		}
	}
	readme.Compile(t, ".", here)
}
