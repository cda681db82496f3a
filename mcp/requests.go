package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// SamplingFunc answers a server's sampling/createMessage request: a model
// call made for the server while one of its tools runs. See
// ServerRequests.Sampling.
type SamplingFunc func(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)

// ElicitationFunc answers a server's elicitation/create request: a
// question to the user asked while one of its tools runs. See
// ServerRequests.Elicitation.
type ElicitationFunc func(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error)

// requestKind is a kind of request a server sends to its client.
type requestKind struct {
	what   string // names it in messages
	method string
	enable string // how an application makes the connector answer it
}

var (
	kindSampling = &requestKind{
		what:   "sampling",
		method: "sampling/createMessage",
		enable: "give the connector mcp.ServerRequests.Sampling (the application's model answers), or mcp.ServerRequests.Forward with callers whose toolkit.Session implements bridge.ServerRequestHandler",
	}
	kindElicitation = &requestKind{
		what:   "elicitation",
		method: "elicitation/create",
		enable: "give the connector mcp.ServerRequests.Elicitation (the application's user interface answers), or mcp.ServerRequests.Forward with callers whose toolkit.Session implements bridge.ServerRequestHandler",
	}
	kindRoots = &requestKind{
		what:   "roots",
		method: "roots/list",
		enable: "give the connector mcp.OptRoots or mcp.OptRootSet, or mcp.ServerRequests.Forward with callers whose toolkit.Session implements bridge.RootsLister",
	}
)

// callMetaKey is the _meta key the connector adds to a request of the
// server that came on the response stream of one of its calls (see
// wire.TagStream); its value names the call. It is removed before the request
// is handed on.
const callMetaKey = wire.CallMetaKey

// hintEvery is the least time between two log lines telling the
// application how to answer a kind of server request it refused.
const hintEvery = time.Minute

// serverRequests is what a connector needs to answer its servers'
// requests.
type serverRequests struct {
	// nonce starts the value of every call tag, so that a tag a server
	// wrote itself names no call.
	nonce string

	mu      sync.Mutex
	hinted  map[*requestKind]time.Time // last hint logged, per kind
	refused map[*requestKind]int       // refusals since that hint
}

// setupServerRequests registers the connector's handlers of server
// requests in copts and advertises what it can answer: sampling and
// elicitation when a handler of its own is set or ServerRequests.Forward
// is given, roots when it has roots (OptRoots, OptRootSet) or forwards.
// Requests it does not advertise are still answered, by a JSON-RPC error
// that says so (and a hint in the log).
func (c *Connector) setupServerRequests(copts *sdk.ClientOptions) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	c.srv.reqs.nonce = hex.EncodeToString(b[:])
	if c.o.forwardRequests || c.o.sampling != nil {
		copts.CreateMessageHandler = answerer(c, kindSampling, bridge.ServerRequestHandler.CreateMessage, c.o.sampling)
	}
	if c.o.forwardRequests || c.o.elicitation != nil {
		copts.ElicitationHandler = answerer(c, kindElicitation, bridge.ServerRequestHandler.Elicit, c.o.elicitation)
	}
	if c.offersRoots() {
		copts.Capabilities.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
}

// offersRoots reports whether the connector advertises the roots
// capability.
func (c *Connector) offersRoots() bool { return c.o.forwardRequests || c.o.roots != nil }

// receiving is the client's receiving middleware: it answers roots/list
// itself (the SDK's own answer knows nothing of the caller), and refuses
// with a useful error the requests nothing answers.
func (c *Connector) receiving(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case ackMethod:
			c.acknowledged(req)
		case kindRoots.method:
			if !c.offersRoots() {
				return nil, c.refuse(kindRoots, 0)
			}
			if r, ok := req.(*sdk.ListRootsRequest); ok {
				return answerer(c, kindRoots, bridge.RootsLister.ListRoots, c.ownRoots)(ctx, r)
			}
		case kindSampling.method:
			if !c.o.forwardRequests && c.o.sampling == nil {
				return nil, c.refuse(kindSampling, 0)
			}
		case kindElicitation.method:
			if !c.o.forwardRequests && c.o.elicitation == nil {
				return nil, c.refuse(kindElicitation, 0)
			}
		}
		return next(ctx, method, req)
	}
}

// ownRoots answers roots/list with the connector's roots.
func (c *Connector) ownRoots(context.Context, *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	roots := []*sdk.Root{} // an empty list, never null
	if c.o.roots != nil {
		roots = append(roots, c.o.roots.Roots()...)
	}
	return &sdk.ListRootsResult{Roots: roots}, nil
}

// answerer returns the SDK's handler of one kind of server request (see
// answer), its params made empty when the server sent none.
func answerer[P any, PP interface {
	*P
	sdk.Params
}, H, R any](c *Connector, kind *requestKind, ask func(H, context.Context, PP) (R, error), own func(context.Context, PP) (R, error)) func(context.Context, *sdk.ClientRequest[PP]) (R, error) {
	return func(ctx context.Context, req *sdk.ClientRequest[PP]) (R, error) {
		if req.Params == nil {
			req.Params = new(P)
		}
		return answer(c, ctx, req.Session, kind, req.Params, ask, own)
	}
}

// answer answers a request of the server on session cs. The caller whose
// call it belongs to answers first, when its session implements H (a
// gateway's client session passes it on to its MCP client); when there is
// no such caller, or it cannot answer (an error wrapping
// toolkit.ErrNotImplemented), the connector's own handler answers (own;
// nil when it has none). A request nothing answers is refused (see
// refuse); a caller that cannot answer and no handler of the connector's
// own make the server get the caller's error, which says why (a gateway's
// client that does not offer sampling, say), and the application a hint.
// The answer of a handler, error or not, goes to the server as it is, as
// the SDK's client does: an error with a JSON-RPC code keeps it (a
// downstream client's refusal reaches the upstream server unchanged), a
// plain one goes without (the go-sdk's servers make that a tool error).
// ask passes the request to the caller's session. The connector's call
// tag is taken out of the _meta of params before anyone sees them.
func answer[PP sdk.Params, H, R any](c *Connector, ctx context.Context, cs *sdk.ClientSession, kind *requestKind, params PP, ask func(H, context.Context, PP) (R, error), own func(context.Context, PP) (R, error)) (R, error) {
	tagged := c.untag(params)
	leave, err := c.enterServerRequest(ctx, tagged, kind.what)
	if err != nil {
		var zero R
		return zero, err
	}
	defer leave()
	h, ok, n := callerAs[H](c, ctx, cs, tagged)
	if ok {
		r, err := ask(h, ctx, params)
		if err == nil || !errors.Is(err, toolkit.ErrNotImplemented) {
			return r, err
		}
		if own == nil {
			c.hint(kind, fmt.Sprintf("the caller cannot answer %s requests: %v", kind.what, err))
			return r, err
		}
	}
	if own != nil {
		return own(ctx, params)
	}
	var zero R
	return zero, c.refuse(kind, n)
}

// callerAs finds the caller a request of the server on session cs belongs
// to and returns its session as an H: the session in ctx (with the
// stateless protocol the SDK hands the request over in the call's own
// context), else that of the call tagged (the request came on that call's
// response stream), else that of the only call in flight on cs. n is the
// number of calls the request may belong to: 0 when none is in flight,
// more than 1 when it cannot be told whose it is.
func callerAs[H any](c *Connector, ctx context.Context, cs *sdk.ClientSession, tagged *inflight) (h H, ok bool, n int) {
	if h, ok := toolkit.SessionAs[H](toolkit.SessionFromContext(ctx)); ok {
		return h, true, 1
	}
	var sess toolkit.Session
	if tagged != nil {
		sess = tagged.session
	} else if sess, n = c.calls.soleOn(cs); n != 1 {
		return h, false, n
	}
	h, ok = toolkit.SessionAs[H](sess)
	return h, ok, 1
}

// tag returns the value of callMetaKey that names the call in.
func (c *Connector) tag(in *inflight) string { return c.srv.reqs.nonce + "." + in.key }

// untag takes the connector's call tag out of the _meta of params and returns the call it
// names, if that call is still in flight.
func (c *Connector) untag(params sdk.Params) *inflight {
	meta := params.GetMeta()
	v, ok := meta[callMetaKey]
	if !ok {
		return nil
	}
	delete(meta, callMetaKey)
	if len(meta) == 0 {
		params.SetMeta(nil)
	}
	s, _ := v.(string)
	key, ok := strings.CutPrefix(s, c.srv.reqs.nonce+".")
	if !ok || c.srv.reqs.nonce == "" {
		return nil
	}
	return c.calls.get(key)
}

// refuse returns the JSON-RPC error that refuses a request of kind nothing
// answers, and tells the application, at most once every hintEvery per
// kind, how to answer such requests. calls is the number of calls the
// request may belong to. The code is method not found when nothing here
// answers that kind of request, internal error when the request cannot be
// told whose it is.
func (c *Connector) refuse(kind *requestKind, calls int) error {
	code := int64(jsonrpc.CodeMethodNotFound)
	msg := fmt.Sprintf("the client does not answer %s requests", kind.what)
	if calls > 1 {
		code = jsonrpc.CodeInternalError
		msg = fmt.Sprintf("%s request during %d concurrent calls: cannot tell whose it is", kind.what, calls)
	}
	c.hint(kind, msg)
	return &jsonrpc.Error{Code: code, Message: msg}
}

// hint logs, at info level and at most once every hintEvery per kind, that
// a request of kind was refused and how to answer such requests.
func (c *Connector) hint(kind *requestKind, why string) {
	r := &c.srv.reqs
	r.mu.Lock()
	if r.hinted == nil {
		r.hinted, r.refused = map[*requestKind]time.Time{}, map[*requestKind]int{}
	}
	now := time.Now()
	if last, ok := r.hinted[kind]; ok && now.Sub(last) < hintEvery {
		r.refused[kind]++
		r.mu.Unlock()
		return
	}
	more := r.refused[kind]
	r.hinted[kind], r.refused[kind] = now, 0
	r.mu.Unlock()
	args := []any{"server", c.serverName(), "reason", why, "enable", kind.enable}
	if more > 0 {
		args = append(args, "refused_since_last", more)
	}
	c.logger.Info("refused a "+kind.what+" request of the server", args...)
}
