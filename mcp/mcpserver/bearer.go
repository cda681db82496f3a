package mcpserver

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/mcp/bridge"
)

// The bearer token of a call. The go-sdk hands a request's verified
// token to its handlers only as the auth.TokenInfo the verifier made of
// it, which holds no token. The verifier of WithBearerAuth is wrapped so
// that each TokenInfo it returns is a fresh one, remembered with the token
// it was made from, for as long as the TokenInfo lives (a weak key: a
// TokenInfo no request holds any more takes its token with it). Nothing
// here is logged, and the TokenInfo itself is left as the verifier made
// it: the token is read only through bridge.CallCredentials.
//
// Only a token an identity provider issued is remembered: one whose
// TokenInfo names its issuer (an "iss" in Extra, as the TokenInfos of
// oauth.JWTVerifier do). Any other credential (a fixed token of the
// program's own, an API key) is the program's secret, which a connector
// must never send anywhere, so none is ever handed out.

// bearerTokens maps each TokenInfo that WithBearerAuth's verifier
// returned to the token it verified.
var bearerTokens sync.Map // weak.Pointer[auth.TokenInfo] → string

// rememberBearer wraps verify so that the token of each TokenInfo it
// returns can be found again with bearerOf.
func rememberBearer(verify auth.TokenVerifier) auth.TokenVerifier {
	return func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		info, err := verify(ctx, token, r)
		if err != nil || info == nil || issuerOf(info) == "" {
			return info, err
		}
		// A copy: a verifier may return one TokenInfo for many tokens.
		c := *info
		key := weak.Make(&c)
		bearerTokens.Store(key, token)
		runtime.AddCleanup(&c, func(k weak.Pointer[auth.TokenInfo]) { bearerTokens.Delete(k) }, key)
		return &c, nil
	}
}

// issuerOf returns the issuer the verifier named in info's Extra ("iss"),
// or "".
func issuerOf(info *auth.TokenInfo) string {
	iss, _ := info.Extra["iss"].(string)
	return iss
}

// bearerOf returns the token WithBearerAuth verified to make info, or "".
func bearerOf(info *auth.TokenInfo) string {
	if info == nil {
		return ""
	}
	tok, _ := bearerTokens.Load(weak.Make(info))
	s, _ := tok.(string)
	return s
}

var _ bridge.CallCredentials = (*serverSession)(nil)

// BearerToken returns the bearer token the call came with, as
// WithBearerAuth verified it, when an identity provider issued it (the
// verifier's TokenInfo names its issuer in Extra["iss"]); otherwise ""
// (no authentication, a credential that no identity provider issued, a
// call over stdio or the legacy SSE transport). It is the caller's
// credential: never log it.
func (s *serverSession) BearerToken() string {
	if s.extra == nil {
		return ""
	}
	return bearerOf(s.extra.TokenInfo)
}
