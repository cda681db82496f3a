package peers

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// prismRel is the entry point of Stoplight Prism's CLI below the
// repository root.
const prismRel = "tools/peers/node_modules/@stoplight/prism-cli/dist/index.js"

// prismListening is what Prism prints once it listens.
const prismListening = "Prism is listening on"

// Prism is a Stoplight Prism mock server of one OpenAPI document: it
// checks every request against the document (answering 4xx with an
// sl-violations header that lists the violations) and answers with
// responses the document describes.
type Prism struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	p   *process
}

// StartPrism starts Prism's mock server for the document at path on a
// free loopback port and waits until it listens (ctx bounds the start).
// It is stopped and reaped when the test ends, and its last output is
// logged when the test failed. It skips the test when the peers are not
// installed.
func StartPrism(t testing.TB, ctx context.Context, document string, args ...string) *Prism {
	t.Helper()
	in := usable(t)
	doc, err := filepath.Abs(document)
	if err != nil {
		t.Fatal(err)
	}
	var s *Prism
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatalf("prism: %v", err)
		}
		argv := append([]string{filepath.Join(in.root, prismRel), "mock", "-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)
		cmd := exec.Command(in.node, append(argv, doc)...)
		cmd.Dir = in.root
		p, err := startProcess(cmd, prismListening)
		if err != nil {
			t.Fatalf("prism: %v", err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err = p.waitReady(ctx, startTimeout, func(ctx context.Context) error { return probeHTTP(ctx, addr) })
		if err == nil {
			s = &Prism{URL: "http://" + addr, p: p}
			break
		}
		if !p.out.contains("EADDRINUSE") {
			t.Fatalf("prism: %v", err)
		}
	}
	if s == nil {
		t.Fatalf("prism: no free port after %d attempts", portAttempts)
	}
	t.Cleanup(func() {
		s.p.stop()
		if t.Failed() {
			t.Logf("prism at %s, last output:\n%s", s.URL, s.p.out.String())
		}
	})
	return s
}
