package oauth

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// askConsentForOffline returns fetch given authorization URLs that ask the
// user to consent (prompt=consent) whenever their scope holds
// offline_access: OpenID Connect Core §11 lets an OpenID provider ignore
// offline_access otherwise, and certified providers do by default, so that
// no refresh token would come and the user would be asked again at each
// token's expiry. The state and everything else of the URL are kept. A nil
// fetch stays nil.
func askConsentForOffline(fetch auth.AuthorizationCodeFetcher) auth.AuthorizationCodeFetcher {
	if fetch == nil {
		return nil
	}
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		return fetch(ctx, &auth.AuthorizationArgs{URL: offlineConsentURL(args.URL)})
	}
}

// offlineConsentURL returns the authorization URL raw with consent added
// to its prompt parameter when its scope holds offline_access and its
// prompt neither asks for consent already nor is "none" (which cannot be
// combined with another value). Anything else, an unparsable URL among
// them, is returned as it is.
func offlineConsentURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || !slices.Contains(strings.Fields(q.Get("scope")), "offline_access") {
		return raw
	}
	prompts := strings.Fields(q.Get("prompt"))
	if slices.Contains(prompts, "consent") || slices.Contains(prompts, "none") {
		return raw
	}
	q.Set("prompt", strings.Join(append(prompts, "consent"), " "))
	u.RawQuery = q.Encode()
	return u.String()
}
