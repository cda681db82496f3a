package schemaguard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// suiteDir returns the JSON Schema test suite that jsonschema-go ships
// (draft 2020-12 and draft-07), from the module cache.
func suiteDir(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	dir := filepath.Join(strings.TrimSpace(string(out)), "jsonschema", "testdata")
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skipf("the module github.com/google/jsonschema-go is not in the module cache (%v)", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no test suite in the module: %v", err)
	}
	return dir
}

// The guard agrees with jsonschema-go on every schema of the JSON Schema
// test suite: it refuses none that Resolve accepts (the suite's recursive
// schemas included, and none of their instances), and accepts none that
// Resolve refuses for a reference.
func TestAgreesWithTestSuite(t *testing.T) {
	dir := suiteDir(t)
	for _, draft := range []string{"draft2020-12", "draft7"} {
		files, _ := filepath.Glob(filepath.Join(dir, draft, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no %s tests in %s", draft, dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var groups []struct {
				Description string
				Schema      json.RawMessage
				Tests       []struct {
					Description string
					Data        any
				}
			}
			if err := json.Unmarshal(data, &groups); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, g := range groups {
				var s jsonschema.Schema
				if err := json.Unmarshal(g.Schema, &s); err != nil {
					continue
				}
				if draft == "draft7" && s.Schema == "" {
					s.Schema = "http://json-schema.org/draft-07/schema#"
				}
				where := filepath.Base(f) + ": " + g.Description
				_, rerr := s.Resolve(nil)
				p, err := Check(&s)
				switch {
				case rerr == nil && err != nil:
					t.Errorf("%s: refused a schema jsonschema-go resolves: %v", where, err)
				case rerr != nil && err == nil && strings.Contains(rerr.Error(), "ref"):
					t.Errorf("%s: accepted a schema whose reference does not resolve: %v", where, rerr)
				case err == nil:
					for _, tc := range g.Tests {
						if err := p.Check(tc.Data); err != nil {
							t.Errorf("%s: %s: %v", where, tc.Description, err)
						}
					}
				}
			}
		}
	}
}
