package openapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/openapi"
)

const authCodeDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /me:
    get:
      operationId: me
      security: [{user: [read]}]
      responses:
        "200":
          description: ok
          content: {text/plain: {schema: {type: string}}}
components:
  securitySchemes:
    user:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: AS/authorize
          tokenUrl: AS/token
          scopes: {read: read}
`

// savedStore signals each save.
type savedStore struct {
	*oauth.FileTokenStore
	saved chan string
}

func (s savedStore) SaveToken(ctx context.Context, t *oauth.StoredToken) error {
	err := s.FileTokenStore.SaveToken(ctx, t)
	s.saved <- t.Principal
	return err
}

func TestUserAuthorizationCode(t *testing.T) {
	cb, cbURL := serveCallback(t)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/authorize": // the user is the login hint the test puts in the URL
			q := r.URL.Query()
			if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
				http.Error(w, "no PKCE", 400)
				return
			}
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=code-"+q.Get("user")+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
		case "/token":
			r.ParseForm()
			if r.Form.Get("code_verifier") == "" {
				http.Error(w, "no verifier", 400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			code := r.Form.Get("code")
			if code == "code-mallory" {
				io.WriteString(w, `{"access_token":"x","token_type":"mac"}`)
				return
			}
			io.WriteString(w, `{"access_token":"tok-`+strings.TrimPrefix(code, "code-")+`","token_type":"Bearer","expires_in":3600}`)
		default:
			io.WriteString(w, r.Header.Get("Authorization"))
		}
	}))
	t.Cleanup(srv.Close)

	store := savedStore{oauth.NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json")), make(chan string, 4)}
	ua := &openapi.UserAuthorization{ClientID: "cid", Callback: cb, Store: store, Resource: srv.URL}
	t.Cleanup(ua.Close)
	tools := mustTools(t, openapi.Config{
		Document:    writeDoc(t, strings.ReplaceAll(authCodeDoc, "AS/", srv.URL+"/")),
		BaseURL:     srv.URL,
		Credentials: map[string]openapi.Credential{"user": {User: ua}},
	})
	me := tools["me"]

	if _, err := me.Run(context.Background(), nil); !errors.Is(err, toolkit.ErrDenied) {
		t.Fatalf("no principal: %v", err)
	}
	authorize := func(user string) {
		t.Helper()
		ctx := toolkit.WithPrincipal(context.Background(), user)
		_, err := me.Run(ctx, nil)
		var are *openapi.AuthorizationRequiredError
		if !errors.As(err, &are) || !errors.Is(err, oauth.ErrAuthorizationPending) || strings.Contains(err.Error(), "http") {
			t.Fatalf("%s unauthorized: %v", user, err)
		}
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != sdk.CodeURLElicitationRequired || !strings.Contains(string(rpc.Data), "state=") {
			t.Fatalf("%s: no URL elicitation: %v", user, rpc)
		}
		resp, err := http.Get(are.URL + "&user=" + user)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s redirect: %s", user, resp.Status)
		}
		// The same redirect again (a replay) is refused.
		resp, err = http.Get(are.URL + "&user=" + user)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("%s replay: %s", user, resp.Status)
		}
	}
	for _, user := range []string{"alice", "bob"} {
		authorize(user)
		if p := <-store.saved; p != user {
			t.Fatalf("saved for %q, want %q", p, user)
		}
	}
	for _, user := range []string{"alice", "bob"} {
		out, err := me.Run(toolkit.WithPrincipal(context.Background(), user), nil)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := out.(string); s != "Bearer tok-"+user {
			t.Errorf("%s: %v", user, out)
		}
	}
	// A forged state is refused.
	resp, err := http.Get(cbURL + "?code=code-alice&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("forged state: %s", resp.Status)
	}
	// A token that is not a bearer token is never saved.
	authorize("mallory")
	if _, err := me.Run(toolkit.WithPrincipal(context.Background(), "mallory"), nil); !errors.As(err, new(*openapi.AuthorizationRequiredError)) {
		t.Errorf("mallory: %v", err)
	}
}

// TestUserAuthorizationRefresh checks that an expired token is refreshed
// and saved, and that a hostile token endpoint fails the call clearly.
func TestUserAuthorizationRefresh(t *testing.T) {
	cases := map[string]struct {
		token func(w http.ResponseWriter, r *http.Request)
		want  string // the Authorization the API sees; "" for an error
	}{
		"refreshed": {token: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"new","token_type":"bearer","expires_in":3600}`)
		}, want: "Bearer new"},
		"huge body": {token: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`)
			for range 4 { // 4 MiB: four times the bound
				io.WriteString(w, strings.Repeat("a", 1<<20))
			}
		}},
		"wrong token type": {token: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"new","token_type":"mac","expires_in":3600}`)
		}},
		"redirect to a private host": {token: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://10.0.0.1/token", http.StatusTemporaryRedirect)
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					if r.ParseForm(); r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "r-carol" {
						http.Error(w, "bad grant", 400)
						return
					}
					tc.token(w, r)
					return
				}
				io.WriteString(w, r.Header.Get("Authorization"))
			}))
			t.Cleanup(srv.Close)
			cb, err := oauth.NewCallback(srv.URL+"/callback", oauth.CallbackConfig{})
			if err != nil {
				t.Fatal(err)
			}
			store := savedStore{oauth.NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json")), make(chan string, 4)}
			if err := store.SaveToken(context.Background(), &oauth.StoredToken{
				Resource: srv.URL, Principal: "carol", TokenURL: srv.URL + "/token", ClientID: "cid",
				Token: &oauth2.Token{AccessToken: "old", TokenType: "Bearer", RefreshToken: "r-carol", Expiry: time.Unix(1, 0)},
			}); err != nil {
				t.Fatal(err)
			}
			<-store.saved
			ua := &openapi.UserAuthorization{ClientID: "cid", Callback: cb, Store: store, Resource: srv.URL}
			t.Cleanup(ua.Close)
			tools := mustTools(t, openapi.Config{
				Document:    writeDoc(t, strings.ReplaceAll(authCodeDoc, "AS/", srv.URL+"/")),
				BaseURL:     srv.URL,
				Credentials: map[string]openapi.Credential{"user": {User: ua}},
			})
			out, err := tools["me"].Run(toolkit.WithPrincipal(context.Background(), "carol"), nil)
			if tc.want == "" {
				t.Log(err)
				if err == nil || !errors.Is(err, toolkit.ErrUnavailable) && !errors.Is(err, openapi.ErrTokenType) {
					t.Fatalf("want an error, got %v %v", out, err)
				}
				if strings.Contains(err.Error(), "r-carol") || strings.Contains(err.Error(), "aaaa") {
					t.Errorf("a secret or the body in the error: %.200s", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := out.(string); s != tc.want {
				t.Errorf("API saw %v", out)
			}
			if p := <-store.saved; p != "carol" {
				t.Errorf("saved for %q", p)
			}
			st, err := store.LoadPrincipalToken(context.Background(), "carol", srv.URL)
			if err != nil || st == nil || st.Token.AccessToken != "new" {
				t.Errorf("stored %v %v", st, err)
			}
		})
	}
}

// loadedStore signals each load.
type loadedStore struct {
	*oauth.FileTokenStore
	loaded chan string
}

func (s loadedStore) LoadPrincipalToken(ctx context.Context, principal, resource string) (*oauth.StoredToken, error) {
	st, err := s.FileTokenStore.LoadPrincipalToken(ctx, principal, resource)
	s.loaded <- principal
	return st, err
}

// TestUserAuthorizationCallAfterRedirect: a call made once the user's
// redirect came, while its code is still being exchanged, waits for the
// token and goes on with it, rather than sending the user to an
// authorization URL already used. Without a store, the token is kept in
// memory.
func TestUserAuthorizationCallAfterRedirect(t *testing.T) {
	for _, stored := range []bool{true, false} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/authorize":
					q := r.URL.Query()
					http.Redirect(w, r, q.Get("redirect_uri")+"?code=code-alice&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
				case "/token":
					<-release
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"access_token":"tok-alice","token_type":"Bearer","expires_in":3600}`)
				default:
					io.WriteString(w, r.Header.Get("Authorization"))
				}
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			cb, _ := serveCallback(t)
			loaded := make(chan string, 8)
			ua := &openapi.UserAuthorization{ClientID: "cid", Callback: cb, Resource: srv.URL}
			if stored {
				ua.Store = loadedStore{oauth.NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json")), loaded}
			}
			t.Cleanup(ua.Close)
			me := mustTools(t, openapi.Config{
				Document:    writeDoc(t, strings.ReplaceAll(authCodeDoc, "AS/", srv.URL+"/")),
				BaseURL:     srv.URL,
				Credentials: map[string]openapi.Credential{"user": {User: ua}},
			})["me"]
			ctx := toolkit.WithPrincipal(context.Background(), "alice")
			_, err := me.Run(ctx, nil)
			var are *openapi.AuthorizationRequiredError
			if !errors.As(err, &are) {
				t.Fatalf("first call: %v", err)
			}
			if stored {
				<-loaded
			}
			resp, err := http.Get(are.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("redirect: %s", resp.Status)
			}
			// The redirect came; its code waits at the token endpoint.
			type result struct {
				out any
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := me.Run(ctx, nil)
				done <- result{out, err}
			}()
			if stored {
				<-loaded // the call found no token yet
				close(release)
			} else {
				close(release)
			}
			r := <-done
			if r.err != nil {
				t.Fatalf("a call after the redirect: %v", r.err)
			}
			if s, _ := r.out.(string); s != "Bearer tok-alice" {
				t.Errorf("API saw %v", r.out)
			}
		})
	}
}

// TestUserAuthorizationScheme: a user authorization for a scheme the
// document lacks, or that is not oauth2 with an authorizationCode flow,
// fails the document with ErrUserScheme, naming the scheme.
func TestUserAuthorizationScheme(t *testing.T) {
	cb, err := oauth.NewCallback("http://127.0.0.1:1/callback", oauth.CallbackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ua := &openapi.UserAuthorization{ClientID: "cid", Callback: cb, Resource: "x"}
	t.Cleanup(ua.Close)
	doc := strings.ReplaceAll(authCodeDoc, "AS/", "https://as.example/")
	for name, tc := range map[string]struct{ doc, scheme, want string }{
		"missing":            {doc, "other", `no security scheme "other"`},
		"api key":            {strings.Replace(doc, "    user:\n      type: oauth2", "    user:\n      type: apiKey\n      in: header\n      name: X-Key\n    old:\n      type: oauth2", 1), "user", `"user" is of type "apiKey"`},
		"client credentials": {strings.Replace(doc, "authorizationCode:\n          authorizationUrl: https://as.example/authorize\n", "clientCredentials:\n", 1), "user", `"user" has no authorizationCode flow`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, openapi.Config{Document: writeDoc(t, tc.doc), BaseURL: "https://api.example", Credentials: map[string]openapi.Credential{tc.scheme: {User: ua}}})
			if !errors.Is(err, openapi.ErrUserScheme) || !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// serveCallback serves an oauth.Callback at URL on a test server.
func serveCallback(t *testing.T) (cb *oauth.Callback, url string) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url = srv.URL + "/callback"
	cb, err := oauth.NewCallback(url, oauth.CallbackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/callback", cb)
	return cb, url
}
