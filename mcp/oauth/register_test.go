package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// answerTransport answers every request with status and body, and keeps
// the body of the last request.
type answerTransport struct {
	status int
	body   []byte
	sent   []byte
}

func (a *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a.sent, _ = io.ReadAll(r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

// registrationRequest is the SDK's registration request.
func registrationRequest(t testing.TB) *http.Request {
	req, err := http.NewRequest(http.MethodPost, "https://as.example/register", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestRegisterKeepsAndAnswers: a registration is sent with the method
// chosen, kept, and the next registration request is answered from it
// without reaching the server; the answer names the method when the
// server's did not.
func TestRegisterKeepsAndAnswers(t *testing.T) {
	h := &Handler{clock: realClock{}, logger: slog.New(slog.DiscardHandler)}
	r := newRegistrar(h, "http://127.0.0.1:9/cb", nil)
	base := &answerTransport{status: http.StatusCreated, body: []byte(`{"client_id":"c-1","redirect_uris":["http://127.0.0.1:9/cb"]}`)}
	meta := &authServerMetadata{Issuer: "https://as.example", AuthMethods: []string{"client_secret_post", "none"}}
	resp, err := r.register(base, registrationRequest(t), meta)
	mustNotErr(t, err)
	var sent, got map[string]any
	mustNotErr(t, json.Unmarshal(base.sent, &sent))
	mustNotErr(t, json.NewDecoder(resp.Body).Decode(&got))
	if sent["token_endpoint_auth_method"] != "none" || sent["grant_types"] == nil {
		t.Errorf("sent %s", base.sent)
	}
	if got["client_id"] != "c-1" || got["token_endpoint_auth_method"] != "none" {
		t.Errorf("answer passed on: %v", got)
	}
	base.sent = nil
	resp, err = r.register(base, registrationRequest(t), meta)
	mustNotErr(t, err)
	got = nil
	mustNotErr(t, json.NewDecoder(resp.Body).Decode(&got))
	if base.sent != nil || resp.StatusCode != http.StatusCreated || got["client_id"] != "c-1" {
		t.Errorf("second registration: sent %q, answer %d %v", base.sent, resp.StatusCode, got)
	}
	// An expiring secret is replaced.
	r.mem["https://as.example"].SecretExpiresAt = time.Now().Add(30 * time.Second)
	base.body = []byte(`{"client_id":"c-2","token_endpoint_auth_method":"none"}`)
	_, err = r.register(base, registrationRequest(t), meta)
	mustNotErr(t, err)
	if base.sent == nil || r.mem["https://as.example"].ClientID != "c-2" {
		t.Errorf("an expiring registration was reused: %v", r.mem["https://as.example"])
	}
}

// FuzzRegister: whatever a registration endpoint answers, the registrar
// does not panic, keeps a registration only with a client ID, passes a
// JSON answer that names the client's method on, and never more than its
// bound.
func FuzzRegister(f *testing.F) {
	f.Add(201, []byte(`{"client_id":"c","client_secret":"s","client_secret_expires_at":1893456000}`))
	f.Add(200, []byte(`{"client_id":"c","token_endpoint_auth_method":"client_secret_basic","redirect_uris":["javascript:x"]}`))
	f.Add(201, []byte(`{"client_id":""}`))
	f.Add(201, []byte(`{"client_id":5}`))
	f.Add(201, []byte(`{"client_id":"c","client_secret_expires_at":-1}`))
	f.Add(201, []byte(`{"client_id":"c","client_secret_expires_at":99999999999999999999}`))
	f.Add(201, []byte(`[]`))
	f.Add(201, []byte(`null`))
	f.Add(400, []byte(`{"error":"invalid_client_metadata"}`))
	f.Add(201, []byte("\xff"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		h := &Handler{clock: realClock{}, logger: slog.New(slog.DiscardHandler)}
		r := newRegistrar(h, "http://127.0.0.1:9/cb", nil)
		base := &answerTransport{status: status, body: body}
		resp, err := r.register(base, registrationRequest(t), &authServerMetadata{Issuer: "https://as.example"})
		if err != nil {
			return
		}
		passed, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistrationBody+1))
		if err != nil || len(passed) > maxRegistrationBody {
			t.Fatalf("answer passed on: %d bytes, %v", len(passed), err)
		}
		reg := r.load(context.Background(), "https://as.example")
		if reg != nil {
			if reg.ClientID == "" || reg.TokenEndpointAuthMethod == "" {
				t.Fatalf("kept %+v", reg)
			}
			var a registrationAnswer
			if json.Unmarshal(passed, &a) != nil || a.ClientID != reg.ClientID || a.TokenEndpointAuthMethod != reg.TokenEndpointAuthMethod {
				t.Fatalf("kept %+v, passed on %q", reg, passed)
			}
		}
	})
}
