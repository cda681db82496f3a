package resource

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

func TestCheckURI(t *testing.T) {
	good := []string{
		"mem:greeting/0123456789abcdef-1",
		"file:///path/to/file",
		"file:data/report.pdf",
		"data:application/json",
		"https://example.com/a?b=c#frag",
		"urn:isbn:0451450523",
		"x-custom+v1.2:thing",
		"file:///caf%C3%A9",
		"file:///café",
	}
	for _, uri := range good {
		if err := CheckURI(uri); err != nil {
			t.Errorf("CheckURI(%q) = %v, want nil", uri, err)
		}
	}
	bad := []string{
		"",
		"relative/path",
		"/abs/path",
		"//host/path",
		"mem:",
		":nothing",
		"1abc:foo",
		"file:///a b",
		"file:///a\tb",
		"file:///a\nb",
		"file:///a\x00b",
		"file:///a\x7fb",
		"file:///a\u00a0b",
		"file:///a\u2028b",
		"file:///a\u200bb",
		"file:///a\u202eb",
		"file:///a\xffb",
		"http://[::1",
		" mem:x",
	}
	for _, uri := range bad {
		err := CheckURI(uri)
		if !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("CheckURI(%q) = %v, want ErrBadParameter", uri, err)
		}
	}
}

func TestURIForm(t *testing.T) {
	r := Must("greeting", "hi")
	rest, ok := strings.CutPrefix(r.URI(), "mem:greeting/")
	if !ok {
		t.Fatalf("URI %q", r.URI())
	}
	proc, n, ok := strings.Cut(rest, "-")
	if !ok || proc != processID || len(proc) != 16 || n == "" || strings.Trim(n, "0123456789") != "" {
		t.Errorf("URI %q: want mem:greeting/<16 hex digits>-<counter>", r.URI())
	}
	if Must("greeting", "hi").URI() == r.URI() {
		t.Error("two resources with the same name and content share a URI")
	}
}

func TestURIUniqueConcurrent(t *testing.T) {
	const workers, each = 8, 2000
	uris := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var r Resource
				switch i % 3 {
				case 0:
					r = Must("out", "same")
				case 1:
					r = Must("out", []byte("same"))
				default:
					r = Must("out", []byte(`"same"`))
				}
				uris[w] = append(uris[w], r.URI())
			}
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, list := range uris {
		for _, u := range list {
			if seen[u] {
				t.Fatalf("duplicate URI %q", u)
			}
			seen[u] = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d URIs, want %d", len(seen), workers*each)
	}
}

func TestProcessIDRandom(t *testing.T) {
	a, b := newProcessID(), newProcessID()
	if a == b || len(a) != 16 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("process IDs %q and %q: want two different 16-digit hex strings", a, b)
	}
}
