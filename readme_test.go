package toolkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/readme"
)

// TestReadmeGoBlocksCompile compiles every Go block of README.md (whole
// programs as they are, fragments as the body of a function whose
// parameters the comment above them declares: see package
// internal/testing/readme), so the README never drifts from the API. A
// block that imports a module of its own (an adapter) is compiled by that
// module's readme_test.go, which this test checks is there.
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readme.Blocks("README.md", string(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go block")
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
				t.Errorf("README.md:%d imports module %s, which has no readme_test.go to compile the block", b.Line, mod)
			}
		}
	}
	readme.Compile(t, ".", here)
}
