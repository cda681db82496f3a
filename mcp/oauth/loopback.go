package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/errs"
)

// LoopbackAuthorizer lets the user of a command-line program authorize
// access: it prints the authorization URL for the user to open in a
// browser and receives the authorization server's redirect on a loopback
// HTTP listener (RFC 8252). Use its RedirectURL and Authorize method in a
// [Config], and Close it when the program ends.
//
// Only the redirect of the authorization in progress counts: one whose
// state parameter is not that of the authorization URL (or is missing) is
// answered 400 Bad Request and the authorizer keeps waiting, so that a
// request forged by another local program, or by a web page when the port
// is known, can neither end the login nor use up its redirect.
type LoopbackAuthorizer struct {
	out      io.Writer
	ln       net.Listener
	srv      *http.Server
	redirect string

	mu      sync.Mutex
	waiting *loopbackWait // the authorization in progress
	ask     sync.Mutex    // one authorization at a time
	done    chan struct{}
}

// loopbackWait is an authorization in progress: the state its redirect
// must carry, and where its outcome goes.
type loopbackWait struct {
	state string
	ch    chan loopbackResult
}

// loopbackResult is the outcome of one redirect.
type loopbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// loopbackPath is the path of the redirect URL when addr names none.
const loopbackPath = "/callback"

// NewLoopbackAuthorizer listens on addr and writes the authorization URLs
// to out. addr is a loopback address such as "127.0.0.1:0" (any free port)
// or "localhost:8765", whose redirect URL has the path /callback, or a
// whole loopback redirect URL such as "http://127.0.0.1:8765/oauth/done",
// for a client registered with that redirect URI (port 0 still means any
// free port). Anything else wraps toolkit.ErrBadParameter.
func NewLoopbackAuthorizer(addr string, out io.Writer) (*LoopbackAuthorizer, error) {
	hostPort, path, escaped, err := loopbackAddress(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: loopback address %q: %v", errs.ErrBadParameter, addr, err)
	}
	host, _, _ := net.SplitHostPort(hostPort)
	ln, err := net.Listen("tcp", hostPort)
	if err != nil {
		return nil, err
	}
	a := &LoopbackAuthorizer{out: out, ln: ln, done: make(chan struct{})}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	a.redirect = "http://" + net.JoinHostPort(host, port) + escaped
	h := func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != path:
			http.NotFound(w, r)
		case r.Method != http.MethodGet:
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
		default:
			a.callback(w, r)
		}
	}
	a.srv = &http.Server{Handler: http.HandlerFunc(h), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = a.srv.Serve(ln)
		close(a.done)
	}()
	return a, nil
}

// RedirectURL returns the URL the authorization server redirects to.
func (a *LoopbackAuthorizer) RedirectURL() string { return a.redirect }

// Authorize is an auth.AuthorizationCodeFetcher: it writes the
// authorization URL and waits for the redirect that carries the URL's
// state parameter (or for ctx).
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	a.ask.Lock()
	defer a.ask.Unlock()
	ch := make(chan loopbackResult, 1)
	w := &loopbackWait{ch: ch}
	if u, err := url.Parse(args.URL); err == nil {
		w.state = u.Query().Get("state")
	}
	a.mu.Lock()
	a.waiting = w
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.waiting = nil
		a.mu.Unlock()
	}()
	if _, err := fmt.Fprintf(a.out, "To authorize access, open this URL in a browser:\n\n  %s\n\n", args.URL); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-a.done:
		return nil, errors.New("the loopback authorizer is closed")
	}
}

// callback receives the authorization server's redirect.
func (a *LoopbackAuthorizer) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	wait := a.waiting
	a.mu.Unlock()
	if wait == nil {
		http.Error(w, "No authorization is in progress.", http.StatusNotFound)
		return
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(wait.state)) != 1 {
		http.Error(w, "This redirect does not belong to the authorization in progress (its state is wrong or missing).", http.StatusBadRequest)
		return
	}
	ch := wait.ch
	if e := q.Get("error"); e != "" {
		http.Error(w, "Authorization was refused: "+e, http.StatusForbidden)
		select {
		case ch <- loopbackResult{err: fmt.Errorf("the authorization server refused: %.200s", e)}:
		default:
		}
		return
	}
	res := &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	if res.Code == "" {
		http.Error(w, "The redirect carries no authorization code.", http.StatusBadRequest)
		return
	}
	select {
	case ch <- loopbackResult{res: res}:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "Authorization complete: you may close this window.\n")
	default:
		http.Error(w, "This authorization was already completed.", http.StatusConflict)
	}
}

// Close stops the listener; an Authorize waiting fails.
func (a *LoopbackAuthorizer) Close() error {
	err := a.srv.Close()
	<-a.done
	return err
}

// isLoopbackHost reports whether host names the loopback interface.
// loopbackAddress returns the host:port to listen on and the path of the
// redirect URL (unescaped, and as written in the URL) of a
// NewLoopbackAuthorizer address.
func loopbackAddress(addr string) (hostPort, path, escaped string, err error) {
	hostPort, path, escaped = addr, loopbackPath, loopbackPath
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		switch {
		case err != nil:
			return "", "", "", err
		case u.Scheme != "http":
			return "", "", "", errors.New("want an http:// redirect URL (loopback redirects are plain HTTP)")
		case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			return "", "", "", errors.New("want a redirect URL without user, query or fragment")
		case !strings.HasPrefix(u.Path, "/") || u.Path == "/":
			return "", "", "", errors.New("want a redirect URL with a path")
		}
		hostPort, path, escaped = u.Host, u.Path, u.EscapedPath()
	}
	host, port, err := net.SplitHostPort(hostPort)
	switch {
	case err != nil:
		return "", "", "", err
	case port == "":
		return "", "", "", errors.New("want a port (0 for any free port)")
	case !isLoopbackHost(host):
		return "", "", "", errors.New("not a loopback address")
	}
	return hostPort, path, escaped, nil
}

func isLoopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
}
