package oauth

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"golang.org/x/oauth2"
)

// TestCleanError: a token endpoint's answer is not quoted in errors.
func TestCleanError(t *testing.T) {
	re := &oauth2.RetrieveError{
		Response:         &http.Response{Status: "400 Bad Request", StatusCode: 400},
		Body:             []byte(`{"error":"invalid_grant","access_token":"secret-x"}`),
		ErrorCode:        "invalid_grant",
		ErrorDescription: "expired",
	}
	got := cleanError(fmt.Errorf("token exchange failed: %w", re)).Error()
	if got != "token endpoint answered 400 Bad Request: invalid_grant (expired)" {
		t.Fatalf("cleanError = %q", got)
	}
	if cleanError(nil) != nil {
		t.Fatal("cleanError(nil) != nil")
	}
	other := errors.New("other")
	if cleanError(other) != other {
		t.Fatal("cleanError changed an unrelated error")
	}
}
