package peers

import (
	"path/filepath"
	"testing"
)

func TestReadClientResults(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "initialize-2026-11-23T18-10-38-780Z", "checks.json"),
		`[{"id":"initialize","status":"SUCCESS"}]`)
	write(t, filepath.Join(dir, "auth", "scope-step-up-2026-11-23T18-10-38-787Z", "checks.json"),
		`[{"id":"a","status":"SUCCESS"},{"id":"scope-step-up-escalation","status":"WARNING","description":"no escalation"}]`)
	write(t, filepath.Join(dir, "auth", "client-credentials-jwt-2026-11-23T18-10-38-787Z", "checks.json"),
		`[{"id":"jwt","status":"FAILURE","errorMessage":"no request"}]`)
	write(t, filepath.Join(dir, "unrelated", "checks.json"), `not json`)

	got, err := readClientResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name         string
		passed       bool
		clean        bool
		nFail, nWarn int
	}{
		{"auth/client-credentials-jwt", false, false, 1, 0},
		{"auth/scope-step-up", true, false, 0, 1},
		{"initialize", true, true, 0, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d scenarios %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Scenario != w.name || g.Passed() != w.passed || g.Clean() != w.clean ||
			len(g.Failures()) != w.nFail || len(g.Warnings()) != w.nWarn {
			t.Errorf("scenario %d = %s passed=%v clean=%v failures=%q warnings=%q, want %+v",
				i, g.Scenario, g.Passed(), g.Clean(), g.Failures(), g.Warnings(), w)
		}
	}
	if got[1].Warnings()[0] != "scope-step-up-escalation: no escalation" {
		t.Errorf("Warnings = %q", got[1].Warnings())
	}
}
