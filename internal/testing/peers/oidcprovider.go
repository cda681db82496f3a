package peers

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// oidcProviderRel is the script that runs panva's oidc-provider below the
// repository root (it imports the package from the pinned node_modules
// beside it).
const oidcProviderRel = "tools/peers/oidcprovider.mjs"

// OIDCProvider is panva's oidc-provider (OpenID certified), run by
// tools/peers/oidcprovider.mjs on a free loopback port: an OpenID provider
// with its default rules (offline_access only with prompt=consent), open
// dynamic registration, and JWT access tokens for any resource indicator
// (scope "mcp", audience the resource).
type OIDCProvider struct {
	// Issuer is its issuer identifier, http://127.0.0.1:PORT; its
	// metadata is at Issuer + "/.well-known/openid-configuration" and its
	// key set at Issuer + "/jwks".
	Issuer string
}

// StartOIDCProvider starts the OpenID provider and waits until it listens.
// It is stopped and reaped when the test ends, and on failure its last
// output is logged. It skips the test when the peers are not installed
// (fails it with PEERS_REQUIRED=1).
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	in := usable(t)
	if _, err := os.Stat(filepath.Join(in.root, "tools/peers/node_modules/oidc-provider/package.json")); err != nil {
		unavailable(t, err)
	}
	script := filepath.Join(in.root, oidcProviderRel)
	cmd := exec.Command(in.node, script)
	cmd.Dir = filepath.Dir(script)
	p, err := startProcess(cmd, tsListening)
	if err != nil {
		t.Fatalf("starting the OpenID provider: %v", err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("OpenID provider, last output:\n%s", p.out.String())
		}
	})
	if err := p.waitReady(context.Background(), startTimeout, nil); err != nil {
		t.Fatalf("starting the OpenID provider: %v", err)
	}
	for _, line := range strings.Split(p.out.String(), "\n") {
		if iss, ok := strings.CutPrefix(line, tsListening); ok {
			return &OIDCProvider{Issuer: iss}
		}
	}
	t.Fatalf("the OpenID provider named no issuer:\n%s", p.out.String())
	return nil
}

// OIDCPerson is someone at a browser who signs in at the provider with
// Login (any password does) and consents to whatever a client asks. The
// browser keeps the provider's cookies, so a second authorization finds
// the person signed in. Its zero value is not usable: see
// [OIDCProvider.Person].
type OIDCPerson struct {
	p      *OIDCProvider
	login  string
	client *http.Client

	mu      sync.Mutex
	prompts []string
}

// Person returns a person who signs in as login.
func (p *OIDCProvider) Person(login string) *OIDCPerson {
	jar, _ := cookiejar.New(nil) // never fails
	return &OIDCPerson{p: p, login: login, client: &http.Client{Jar: jar}}
}

// Prompts returns the pages the person was shown, in order: "login" for
// the sign-in form, "consent" for the consent form.
func (o *OIDCPerson) Prompts() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.prompts...)
}

// maxOIDCPages bounds the pages of one authorization.
const maxOIDCPages = 8

// formAction and formPrompt read the development interaction pages of
// oidc-provider: one form, posting to its action, with a hidden prompt.
var (
	formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	formPrompt = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)
)

// Authorize opens authURL, an authorization URL of the provider, and goes
// through its pages, signing in and consenting, until the provider
// redirects to redirectURL; it returns that redirect's query (code, state
// and iss, or error). The redirect itself is not followed.
func (o *OIDCPerson) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	var back *url.URL
	client := *o.client
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), redirectURL) {
			back = r.URL
			return http.ErrUseLastResponse
		}
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	for range maxOIDCPages {
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if back != nil {
			return back.Query(), nil
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("the provider answered %s at %s: %.300s", resp.Status, resp.Request.URL.Path, page)
		}
		action, prompt := formAction.FindSubmatch(page), formPrompt.FindSubmatch(page)
		if action == nil || prompt == nil {
			return nil, fmt.Errorf("no interaction form at %s: %.300s", resp.Request.URL.Path, page)
		}
		target, err := resp.Request.URL.Parse(html.UnescapeString(string(action[1])))
		if err != nil {
			return nil, err
		}
		form := url.Values{"prompt": {string(prompt[1])}}
		if string(prompt[1]) == "login" {
			form.Set("login", o.login)
			form.Set("password", "any")
		}
		o.mu.Lock()
		o.prompts = append(o.prompts, string(prompt[1]))
		o.mu.Unlock()
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, target.String(), strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return nil, fmt.Errorf("no redirect to the client after %d pages", maxOIDCPages)
}
