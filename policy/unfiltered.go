package policy

import (
	"context"

	"github.com/llmkit/toolkit/internal/policyctx"
)

// Unfiltered returns a copy of ctx in which a toolkit's List shows every
// tool, those its policy denies the principal included. It is for code
// that checks the rules themselves against what the servers offer (which
// tools a rule matches, which definitions to pin), never for what a
// principal is shown: the server face and the model layer filter their
// lists per principal.
func Unfiltered(ctx context.Context) context.Context { return policyctx.Unfiltered(ctx) }
