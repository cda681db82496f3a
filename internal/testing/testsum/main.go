// Command testsum reads the JSON event streams of `go test -json` (files
// named on the command line, or standard input) and reports them quietly:
// the output of each failed test, each package that failed without a
// failed test (a build error, a panic, a leak found by TestMain), and one
// closing line "N passed, M failed" (", K skipped" when any were). Each
// name given with -failed (a step that is not a test, such as vet) counts
// as one failure.
//
// It exits 1 when anything failed or no test ran, else 0. make test runs it
// last (scripts/test.sh).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (test2json) output.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build events
	FailedBuild string // package events whose build failed
}

// key names a test of a package.
type key struct{ pkg, test string }

// summary accumulates the events of every stream.
type summary struct {
	passed, failed, skipped int
	output                  map[key]*strings.Builder // per test, and per package (test "")
	failures                []key                    // in the order they failed
	failedTests             map[string]int           // per package
	buildOutput             map[string]*strings.Builder
	silent                  []string // streams that held no event at all
}

func newSummary() *summary {
	return &summary{
		output:      map[key]*strings.Builder{},
		failedTests: map[string]int{},
		buildOutput: map[string]*strings.Builder{},
	}
}

// maxOutput bounds the output kept per test, so that a test that floods
// its log cannot exhaust memory.
const maxOutput = 64 << 10

func appendBounded(m map[key]*strings.Builder, k key, s string) {
	b := m[k]
	if b == nil {
		b = &strings.Builder{}
		m[k] = b
	}
	if b.Len()+len(s) <= maxOutput {
		b.WriteString(s)
	}
}

// read consumes one stream. Lines that are not JSON events (a go command
// error before any test ran) are kept as output of the pseudo-package
// named by source, and shown when the stream held no event.
func (s *summary) read(source string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	events := 0
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			appendBounded(s.output, key{pkg: source}, string(line)+"\n")
			continue
		}
		events++
		s.add(ev)
	}
	if events == 0 {
		// The go command failed before any test ran: what it said is the
		// only clue, and the stream counts as one failure.
		s.silent = append(s.silent, source)
		s.failed++
	}
	return sc.Err()
}

func (s *summary) add(ev event) {
	switch ev.Action {
	case "build-output":
		b := s.buildOutput[ev.ImportPath]
		if b == nil {
			b = &strings.Builder{}
			s.buildOutput[ev.ImportPath] = b
		}
		if b.Len() < maxOutput {
			b.WriteString(ev.Output)
		}
		return
	case "output":
		appendBounded(s.output, key{ev.Package, ev.Test}, ev.Output)
		return
	}
	k := key{ev.Package, ev.Test}
	switch {
	case ev.Test != "" && ev.Action == "pass":
		s.passed++
		delete(s.output, k)
	case ev.Test != "" && ev.Action == "skip":
		s.skipped++
		delete(s.output, k)
	case ev.Test != "" && ev.Action == "fail":
		s.failed++
		s.failedTests[ev.Package]++
		s.failures = append(s.failures, k)
	case ev.Test == "" && ev.Action == "fail":
		// A package whose tests all passed but that failed all the same:
		// its build, a panic outside a test, TestMain's leak check, the
		// test binary's timeout.
		if s.failedTests[ev.Package] == 0 {
			s.failed++
		}
		s.failures = append(s.failures, k)
	case ev.Test == "" && (ev.Action == "pass" || ev.Action == "skip"):
		delete(s.output, k)
	}
}

// report writes the failures' output and the closing line.
func (s *summary) report(w io.Writer, steps []string) {
	failed := map[key]bool{}
	for _, k := range s.failures {
		failed[k] = true
	}
	for _, k := range s.failures {
		if k.test == "" && s.failedTests[k.pkg] > 0 && len(s.unfinished(k.pkg, failed)) == 0 {
			continue // its failed tests say why
		}
		name := k.pkg
		if k.test != "" {
			name += " " + k.test
		}
		fmt.Fprintf(w, "--- FAIL: %s\n", name)
		if k.test == "" {
			for path, b := range s.buildOutput {
				if path == k.pkg || strings.HasPrefix(path, k.pkg+" ") {
					io.WriteString(w, b.String())
				}
			}
			s.reportUnfinished(w, k.pkg, failed)
		}
		if b := s.output[k]; b != nil {
			io.WriteString(w, b.String())
		}
	}
	for _, src := range s.silent {
		fmt.Fprintf(w, "--- FAIL: %s: no test ran\n", src)
		if b := s.output[key{pkg: src}]; b != nil {
			io.WriteString(w, b.String())
		}
	}
	for _, st := range steps {
		fmt.Fprintf(w, "--- FAIL: %s\n", st)
	}
	line := fmt.Sprintf("%d passed, %d failed", s.passed, s.failed+len(steps))
	if s.skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.skipped)
	}
	fmt.Fprintln(w, line)
}

// reportUnfinished writes the output of pkg's tests that never ended: a
// test binary that timed out or crashed leaves its running tests without
// an end, and test2json gives them the panic and its stacks.
func (s *summary) reportUnfinished(w io.Writer, pkg string, failed map[key]bool) {
	for _, name := range s.unfinished(pkg, failed) {
		fmt.Fprintf(w, "--- UNFINISHED: %s %s\n", pkg, name)
		io.WriteString(w, s.output[key{pkg, name}].String())
	}
}

// unfinished names pkg's tests that have output but neither passed,
// skipped nor failed, in order.
func (s *summary) unfinished(pkg string, failed map[key]bool) []string {
	var names []string
	for k := range s.output {
		if k.pkg == pkg && k.test != "" && !failed[k] {
			names = append(names, k.test)
		}
	}
	sort.Strings(names)
	return names
}

// stepList collects the -failed flags.
type stepList []string

func (l *stepList) String() string     { return strings.Join(*l, ",") }
func (l *stepList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var steps stepList
	flag.Var(&steps, "failed", "a step that failed (repeatable); counts as one failure")
	flag.Parse()
	s := newSummary()
	files := flag.Args()
	if len(files) == 0 {
		if err := s.read("file:stdin", os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		err = s.read("file:"+f, r)
		r.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	}
	s.report(os.Stdout, steps)
	if s.failed > 0 || len(steps) > 0 || s.passed == 0 {
		os.Exit(1)
	}
}
