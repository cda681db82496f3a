// Package redisstate keeps the state a fleet of toolkit processes must
// share on one Redis server, so that several replicas of a gateway act as
// one: OAuth tokens and client registrations (an [oauth.PrincipalTokenStore]
// and [oauth.RegistrationStore]), pinned tool definitions with their
// approvals (a [policy.PinStore] that says when another replica changed
// them), rate-limit budgets (a [policy.LimitStore]: a limit counts
// calls across the fleet) and the authorization redirects of per-user
// OAuth (an [oauth.RedirectRelay]: a user's browser may bring the
// redirect to another replica than the one whose authorization waits),
// the per-user authorizations in flight (an [oauth.FlightRegistry]: a
// user whose authorization two replicas need is asked once, with one URL,
// and an [oauth.FlightWatcher]: the others go on as soon as it ends)
// and the answered input rounds (a [mcpserver.ReplaySet]: a relayed
// round is answered once in the fleet).
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	st, err := redisstate.New(redisstate.Config{Client: rdb, SealKeys: keys})
//	...
//	tokens, err := st.Tokens()   // for oauth.Config.Store
//	flights, err := st.Flights() // for oauth.Config.Flights
//	pins := st.Pins("gateway")   // for policy.WithPins
//	limits := st.Limits()        // for policy.WithLimitStore
//
// Each piece of state has the in-process or file implementation of its
// own package as the default; this package is the one for fleets, a
// module of its own so that programs without Redis never download its
// client.
//
// # Secrets at rest
//
// Tokens, refresh tokens and client secrets are sealed with AES-GCM
// before they reach Redis, each bound to the key it is stored under (a
// record copied under another user's key does not open), so whoever reads
// Redis, or a dump of it, reads no credential. The first of
// [Config.SealKeys] seals and every one opens: a key is rotated by putting
// the new one first and dropping the old one once every record was
// written again (a token is written again at its next refresh). A record
// no key opens is skipped with a warning, as if it were not there.
//
// Pins and approvals are sealed the same way when SealKeys are given, so
// that write access to Redis is not the power to approve a tool: a pin
// written in clear, altered or copied from another tool fails closed (the
// tool is quarantined until a person approves what it serves). Without
// SealKeys pins are stored in clear. A deleted pin is not detected: its
// tool is pinned again as first seen.
//
// # When Redis is unreachable
//
// Every operation is bounded by [Config.Timeout] and fails with an error
// wrapping [toolkit.ErrUnavailable]; nothing is retried behind the
// caller's back and nothing is written later. What that means for each
// kind of state is decided where it is consumed: an OAuth handler keeps
// the token it holds and fails a save (the person is not asked again),
// and runs its authorizations as the only process (one warning);
// the policy engine keeps the pins it loaded, and admits or refuses
// calls as policy.WithLimitStore's failOpen says.
package redisstate
