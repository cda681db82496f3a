package codemode_test

import (
	"testing"

	"github.com/llmkit/toolkit/internal/testing/readme"
)

// TestReadmeGoBlocksCompile compiles the Go blocks of the repository's
// README.md and docs/ that use this module (the root module's test
// compiles the others), so the guide docs/codemode.md never drifts from
// the package.
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package")
	}
	blocks, err := readme.Docs("..")
	if err != nil {
		t.Fatal(err)
	}
	var mine []readme.Block
	for _, b := range blocks {
		if mod, err := b.Module(".."); err != nil {
			t.Error(err)
		} else if mod == "codemode" {
			mine = append(mine, b)
		}
	}
	if len(mine) == 0 {
		t.Fatal("README.md and docs/ have no Go block that uses this module; remove this test with the block")
	}
	readme.Compile(t, ".", mine)
}
