package mcp

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/llmkit/toolkit/mcp/oauth"
)

// unwired keeps an error's text and causes, but for the transport's
// JSON-RPC errors, which a server face would answer a call with.
func TestUnwired(t *testing.T) {
	rejected := &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}
	se := &oauth.ServerError{Endpoint: "token", Status: 400, Code: "invalid_grant"}
	err := fmt.Errorf("calling %q: %w: %w", "initialize", rejected, fmt.Errorf("%w: %w", oauth.ErrExchangeRefused, se))
	got := unwired(err)
	if got.Error() != err.Error() {
		t.Errorf("text %q, want %q", got, err)
	}
	var we *jsonrpc.Error
	if errors.As(got, &we) {
		t.Errorf("a JSON-RPC error is left: %v", we)
	}
	if !errors.Is(got, oauth.ErrExchangeRefused) {
		t.Error("the exchange's refusal is lost")
	}
	var gotSE *oauth.ServerError
	if !errors.As(got, &gotSE) || gotSE != se {
		t.Errorf("the server's error is lost: %v", gotSE)
	}
	if errors.As(unwired(rejected), &we) {
		t.Error("a JSON-RPC error alone is left")
	}
	plain := errors.New("plain")
	if unwired(plain) != plain || unwired(nil) != nil {
		t.Error("an error without JSON-RPC errors is changed")
	}
}
