// Package policy is a rule engine for toolkit.WithPolicy: it decides
// which tool calls run, for whom, how often, and whether the tool is still
// the one a person approved.
//
//	eng, err := policy.New(ctx, policy.Config{
//		Default: toolkit.Allow,
//		Rules: []policy.Rule{
//			{Name: "no-shell", Effect: toolkit.Deny, Tools: []string{"shell_*"}},
//			{Name: "confirm-writes", Effect: toolkit.Ask, Annotations: policy.Annotations{Destructive: ptr(true)}},
//			{Name: "guests-read", Effect: toolkit.Deny, Principals: []string{"guest:*"}, Annotations: policy.Annotations{ReadOnly: ptr(false)}},
//		},
//		RateLimits: []policy.Limit{{Per: "principal", Rate: policy.Rate{Count: 60, Period: time.Minute}}},
//	}, policy.WithPins(policy.NewFileStore("pins.json")))
//	tk, err := toolkit.New(toolkit.WithPolicy(eng), toolkit.WithApprover(askTheUser))
//
// # Rules
//
// A Rule matches on the principal (toolkit.WithPrincipal; the server face
// sets the authenticated client's), the tool's namespace and name (glob
// patterns: '*' any run of characters, '?' one, '\' escapes), its
// annotations (read-only, destructive, idempotent, open-world, with MCP's
// defaults) and, optionally, its arguments. Rules are tried in order and
// the first that matches decides: allow, deny or ask; when none does, the
// Config's Default does. Deny also hides the tool from the principal's
// lists. A rule whose outcome depends on the arguments cannot hide a
// tool: when listing, such a deny rule is passed over, and such an allow
// or ask rule lists it.
//
// Arguments are matched with Conditions: a JSON Pointer (RFC 6901) to a
// value, and that the value equals a JSON value, matches a glob, or is
// present or absent. Anything beyond that is a Go function, Rule.Match.
// There is deliberately no expression language: CEL (what Kubernetes and
// agentgateway use) would bring a large dependency into every program
// that has a policy, and a rule file that can compute can also be wrong
// in ways a review does not see; equality and globs on named values cover
// what a configuration file should say, and Go covers the rest with the
// compiler's checks. Arguments that cannot be read unambiguously (not
// JSON, an object with a key twice, nesting deeper than 64) make deny and
// ask rules with conditions match, never allow rules.
//
// # Rate limits
//
// A Limit counts the calls it matches per principal, per tool, per both,
// or all together, with a token bucket (golang.org/x/time/rate). A call
// that finds a bucket empty is refused, with a toolkit.PolicyError
// wrapping toolkit.ErrRateLimited whose Decision.RetryAfter says when the
// bucket has room again; it uses up no budget of the other limits.
//
// # Pinned definitions
//
// WithPins defends against a server that changes a tool after it was
// approved (the "rug pull"). The engine records a SHA-256 digest of each
// tool's definition — name, title, description, input and output
// schemas, annotations, and an MCP App tool's `_meta.ui` (its view and who may
// call it) — the first time it sees it, in a PinStore
// (FileStore keeps a JSON file). When a tool comes back with another
// definition it is quarantined: denied to everyone under RulePinned, with
// a reason naming the fields that changed, so it disappears from lists
// and its calls are refused, until Engine.Approve accepts the new
// definition. A quarantined definition that comes back under another name
// is quarantined there too. Each change is reported field by field by one
// log line, a PinEvent and a metric. Builtins (the application's own
// code) are not pinned.
//
// # Changes
//
// SetConfig replaces rules and limits while the engine runs (limits that
// stay the same keep their budgets), ReloadPins picks up approvals made
// by another process sharing the store (FileStore.Watch says when there
// are some), and Approve takes effect at once;
// each makes the toolkit announce toolkit.ConnectorEventPolicyChanged, on
// which the server face tells its clients that their tool lists changed.
package policy
