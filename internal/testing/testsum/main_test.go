package main

import (
	"strings"
	"testing"
)

// stream is go test -json output of two packages: one test passes, one
// fails with output, one skips, a subtest passes; a second package fails
// without a failed test (as a leak found by TestMain does).
const stream = `{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"quiet\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"run","Package":"a","Test":"TestBad"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"    bad_test.go:9: want 1, got 2\n"}
{"Action":"fail","Package":"a","Test":"TestBad"}
{"Action":"run","Package":"a","Test":"TestOK/sub"}
{"Action":"pass","Package":"a","Test":"TestOK/sub"}
{"Action":"skip","Package":"a","Test":"TestSkip"}
{"Action":"fail","Package":"a"}
{"Action":"output","Package":"b","Output":"goleak: found unexpected goroutines\n"}
{"Action":"run","Package":"b","Test":"TestFine"}
{"Action":"pass","Package":"b","Test":"TestFine"}
{"Action":"fail","Package":"b"}
`

func TestSummary(t *testing.T) {
	s := newSummary()
	if err := s.read("file:x", strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.report(&out, []string{"go vet"})
	got := out.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if last := lines[len(lines)-1]; last != "3 passed, 3 failed, 1 skipped" {
		t.Errorf("closing line %q, want %q", last, "3 passed, 3 failed, 1 skipped")
	}
	for _, want := range []string{"--- FAIL: a TestBad\n", "want 1, got 2", "--- FAIL: b\n", "goleak: found", "--- FAIL: go vet\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
}

// TestSummaryNoEvents: a stream without a single event (the go command
// failed before testing) is a failure, shown with what it said.
func TestSummaryNoEvents(t *testing.T) {
	s := newSummary()
	if err := s.read("file:y", strings.NewReader("go: cannot find main module\n")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.report(&out, nil)
	if got := out.String(); !strings.Contains(got, "cannot find main module") || !strings.HasSuffix(got, "0 passed, 1 failed\n") {
		t.Errorf("report:\n%s", got)
	}
}

// FuzzSummary: any input is read without error or panic, and the closing
// line is always last.
func FuzzSummary(f *testing.F) {
	f.Add(stream)
	f.Add("{\"Action\":\"fail\"}\nnot json\n{")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		s := newSummary()
		if err := s.read("file:f", strings.NewReader(in)); err != nil {
			return // a line over the scanner's bound
		}
		var out strings.Builder
		s.report(&out, nil)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, " passed, ") {
			t.Fatalf("closing line %q", last)
		}
	})
}

// TestSummaryTimeout: a test binary that times out ends its package with a
// failure and leaves the running tests without an end; test2json gives
// them the panic, and the report shows it.
func TestSummaryTimeout(t *testing.T) {
	const timedOut = `{"Action":"run","Package":"c","Test":"TestDone"}
{"Action":"pass","Package":"c","Test":"TestDone"}
{"Action":"run","Package":"c","Test":"TestHang"}
{"Action":"output","Package":"c","Test":"TestHang","Output":"panic: test timed out after 15m0s\n"}
{"Action":"output","Package":"c","Test":"TestHang","Output":"\trunning tests:\n\t\tTestHang (14m59s)\n"}
{"Action":"output","Package":"c","Output":"FAIL\tc\t900.1s\n"}
{"Action":"fail","Package":"c"}
`
	s := newSummary()
	if err := s.read("file:z", strings.NewReader(timedOut)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.report(&out, nil)
	got := out.String()
	for _, want := range []string{"--- FAIL: c\n", "--- UNFINISHED: c TestHang\n", "panic: test timed out", "TestHang (14m59s)", "1 passed, 1 failed\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}
