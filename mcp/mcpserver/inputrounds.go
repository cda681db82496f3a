package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// Bounds of the calls that wait for a client's input (inputRounds).
const (
	// InputWait is how long a tool call of a 2026-07-28 client waits for
	// the client to come back with the input it was asked for (an
	// input-required result answered by a retry of the call); past it the
	// call is cancelled. It is what a person plausibly needs to answer a
	// form, no more: a waiting call holds a slot.
	InputWait = 3 * time.Minute
	// MaxInputWaits is the most tool calls of 2026-07-28 clients that may
	// run over rounds at once, over all clients; a call that would be one
	// more fails (with a tool error saying so).
	MaxInputWaits = 1024
	// MaxInputWaitsPerPrincipal is the most such calls of one principal
	// (the UserID of the request's token; requests without a token are
	// one principal): a sixty-fourth of MaxInputWaits, so that a few
	// principals cannot take every slot. Once three quarters of the
	// slots are taken, a principal that already has inputReserveShare
	// calls waiting gets no more: the last quarter is kept for the
	// principals that wait for few or none.
	MaxInputWaitsPerPrincipal = MaxInputWaits / 64
)

// inputReserveShare is how many waiting calls a principal may hold and
// still take one of the last quarter of the slots.
const inputReserveShare = 2

// inputRounds turns the requests a tool (or a prompt being rendered, a
// resource being read) sends its client while it runs (sampling,
// elicitation, roots) into the input-required results of protocol
// 2026-07-28, which forbids server requests during a request:
//
//   - the first tools/call (prompts/get, resources/read) starts the tool
//     in a goroutine of its own, with a session whose CreateMessage,
//     Elicit and ListRoots do not send a request but hand it over
//     (serverRequest) and wait for the answer;
//   - the call's handler waits for the tool's end or its first question;
//     a question is answered to the client as an input-required result:
//     the request, and a requestState naming the waiting call;
//   - the client's retry carries the answer and that requestState: the
//     answer goes to the waiting tool, and the handler waits again.
//
// A requestState is sealed with AES-GCM (stateKeys, inputstate.go): it
// names the waiting call (128 random bits) and the round, and binds them
// to the principal, the tool, the arguments and an expiry (InputWait), so
// that it is good for one retry of the same request by the same principal
// within InputWait; anything else is refused with -32602. Rounds of one
// call may come on different connections; since the call runs in this
// process, not to another replica of the server (one that shares the key
// opens the requestState, and says the call does not wait there). A
// connector's upstream that answers with an input-required result of its
// own has it passed instead (passed): nothing waits, and any replica
// sharing the key takes the retry.
type inputRounds struct {
	// InputWait, MaxInputWaits and MaxInputWaitsPerPrincipal but in tests.
	wait              time.Duration
	max, perPrincipal int
	keys              *stateKeys // seal and open requestStates

	mu      sync.Mutex
	waiting map[[16]byte]*inputCall // by id
	by      map[string]int          // calls per principal
	closed  bool
}

// roundRequest is a request served in rounds: a tools/call, prompts/get
// or resources/read of one toolkit item.
type roundRequest struct {
	method    string // "tools/call", "prompts/get" or "resources/read"
	key       string // the item's toolkit key
	item      any    // the item (a toolkit item's Value)
	name      string // the exposed name, or the URI
	args      json.RawMessage
	state     string // the requestState of a retry
	answers   sdk.InputResponseMap
	principal string
	// result makes the method's input-required result.
	result func(sdk.InputRequestMap, string) sdk.Result
	// failed answers the request when it cannot run over rounds.
	failed func(error) (sdk.Result, error)
}

// target is what a requestState of rq is bound to besides its name and
// arguments: the method and the toolkit item.
func (rq *roundRequest) target() string { return rq.method + " " + rq.key }

// inputCall is a request whose item runs over several rounds.
type inputCall struct {
	id        [16]byte
	principal string
	tool      string // the exposed name, or the URI
	target    string // roundRequest.target
	result    func(sdk.InputRequestMap, string) sdk.Result
	args      json.RawMessage // of the first round, for request
	request   [32]byte        // requestHash of tool and args, made at the first question; guarded by inputRounds.mu
	cancel    context.CancelFunc
	requests  chan *serverRequest           // the item's questions
	done      chan callOutcome              // the item's end (buffered)
	cur       atomic.Pointer[serverSession] // the session of the current round
	round     int                           // guarded by inputRounds.mu
	pending   *serverRequest                // the question the client was sent; guarded by inputRounds.mu
	timer     *time.Timer                   // expiry while waiting for the client; guarded by inputRounds.mu
}

// serverRequest is one question of a tool to the client, and where its answer
// goes.
type serverRequest struct {
	call  *inputCall
	req   sdk.InputRequest
	reply chan requestReply // buffered
}

// requestReply is the answer to an serverRequest, or why there is none.
type requestReply struct {
	answer sdk.InputResponse
	err    error
}

// callOutcome is the end of a request's run.
type callOutcome struct {
	res sdk.Result
	err error
}

func newInputRounds(keys *stateKeys) *inputRounds {
	return &inputRounds{wait: InputWait, max: MaxInputWaits, perPrincipal: MaxInputWaitsPerPrincipal, keys: keys,
		waiting: map[[16]byte]*inputCall{}, by: map[string]int{}}
}

// inRounds reports whether a request must have its questions to the
// client turned into input-required results: its client speaks
// 2026-07-28 or newer (version), or it carries a requestState of ours.
func inRounds(version, state string) bool {
	return version >= statelessVersion || state != ""
}

// usesInputRounds is inRounds for a tools/call.
func usesInputRounds(req *sdk.CallToolRequest) bool {
	return inRounds(req.ProtocolVersion(), req.Params.RequestState)
}

// asResult returns res as the result type of its method.
func asResult[R sdk.Result](res sdk.Result, err error) (R, error) {
	r, _ := res.(R)
	return r, err
}

// serve serves one round of rq: the first (no requestState) starts run, a
// retry hands the client's answer to the waiting run, or, for a
// requestState that carries an upstream server's (passed on), runs the item
// again with the client's answers and that state. run runs the item with
// a context that outlives the round's request and the session given
// (whose questions to the client become rounds); a connector's item whose
// upstream answers with an input-required result ends it with a
// *bridge.InputRequired, which goes to the client passed (passState).
func (r *inputRounds) serve(ctx context.Context, rq *roundRequest, sess *serverSession, run func(ctx context.Context, sess toolkit.Session) (sdk.Result, error)) (sdk.Result, error) {
	round := &bridge.InputRound{Item: rq.item}
	if rq.state != "" {
		s, err := r.admit(rq)
		if err != nil {
			return nil, err
		}
		if !s.passed {
			ask, answer, err := r.resume(s, rq.answers)
			if err != nil {
				return nil, err
			}
			// The call goes on: the run's own Call audits it.
			markAudited(ctx)
			c := ask.call
			c.cur.Store(sess) // before the item goes on
			ask.reply <- requestReply{answer: answer}
			return r.await(ctx, c)
		}
		// The upstream's round: nothing waits here, the item runs again
		// with the client's answers and the upstream's state.
		if err := r.keys.redeemEverywhere(ctx, time.Now(), s); err != nil {
			return nil, err
		}
		round.Responses, round.State = rq.answers, s.upstream
	}
	c, err := r.start(rq)
	if err != nil {
		return rq.failed(err)
	}
	c.cur.Store(sess)
	// The run outlives this round's request; it ends with its item, when
	// the client does not come back in time, or with the server.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	go func() {
		res, err := run(bridge.WithInputRound(rctx, round), &roundSession{serverSession: sess, call: c})
		if ir := (*bridge.InputRequired)(nil); errors.As(err, &ir) {
			res, err = r.passed(c, ir), nil
		}
		c.done <- callOutcome{res, err}
	}()
	return r.await(ctx, c)
}

// passed returns the input-required result that passes an upstream
// server's input requests (ir) on to the client of c: the upstream's
// requests as they are, and a requestState of ours that carries the
// upstream's, sealed like any other, bound to the principal, the name,
// the request and an expiry, and to the method and toolkit item, so that
// the retry goes back to the same upstream item. Nothing waits for it
// here: any server sharing the keys takes the retry.
func (r *inputRounds) passed(c *inputCall, ir *bridge.InputRequired) sdk.Result {
	r.mu.Lock()
	if c.round == 0 && c.args != nil {
		c.request = requestHash(c.tool, c.args)
		c.args = nil
	}
	s := &inputState{passed: true, expires: time.Now().Add(r.wait), principal: c.principal, tool: c.tool, request: c.request,
		target: c.target, upstream: ir.State}
	r.mu.Unlock()
	_, _ = rand.Read(s.call[:])
	return c.result(ir.Requests, r.keys.seal(s))
}

// start makes a new run of rq; it is registered (and counted) when it
// first asks its client (register).
func (r *inputRounds) start(rq *roundRequest) (*inputCall, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("%w: the server is closing", toolkit.ErrUnavailable)
	}
	c := &inputCall{principal: rq.principal, tool: rq.name, target: rq.target(), result: rq.result, args: rq.args,
		requests: make(chan *serverRequest), done: make(chan callOutcome, 1)}
	if c.args == nil {
		c.args = json.RawMessage("{}")
	}
	_, _ = rand.Read(c.id[:])
	return c, nil
}

// register makes c one of the calls waiting for their clients, within the
// bounds (MaxInputWaits, MaxInputWaitsPerPrincipal, the reserve of the
// last quarter). r.mu is held.
func (r *inputRounds) register(c *inputCall) error {
	if r.waiting[c.id] == c {
		return nil
	}
	if r.closed {
		return fmt.Errorf("%w: the server is closing", toolkit.ErrUnavailable)
	}
	if len(r.waiting) >= r.max {
		return fmt.Errorf("%w: %d calls already wait for their clients' input; retry later", toolkit.ErrUnavailable, r.max)
	}
	held := r.by[c.principal]
	if held >= r.perPrincipal {
		return fmt.Errorf("%w: %d calls of this principal already wait for input; retry later", toolkit.ErrUnavailable, r.perPrincipal)
	}
	if held >= inputReserveShare && len(r.waiting) >= r.max-r.max/4 {
		return fmt.Errorf("%w: %d calls of this principal already wait for input, and the last slots are kept for others; retry later", toolkit.ErrUnavailable, held)
	}
	r.waiting[c.id] = c
	r.by[c.principal]++
	return nil
}

// admit opens a retry's requestState and checks that the retry may use
// it: sealed by our keys, not expired, for the same principal, name and
// arguments, method and toolkit item.
func (r *inputRounds) admit(rq *roundRequest) (*inputState, error) {
	s, err := r.keys.open(rq.state)
	if err != nil {
		return nil, err
	}
	if err := s.check(time.Now(), rq.principal, rq.name, requestHash(rq.name, rq.args)); err != nil {
		return nil, err
	}
	if s.target != rq.target() {
		return nil, errStateOther
	}
	return s, nil
}

// resume finds the run waiting here that an admitted requestState (s)
// names and returns the question the retry answers (taken: a second
// retry with the same requestState is refused) and the answer, from
// answers.
func (r *inputRounds) resume(s *inputState, answers sdk.InputResponseMap) (*serverRequest, sdk.InputResponse, error) {
	now := time.Now()
	answer := answers[inputKey(int(s.round))]
	if answer == nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses has no %q", inputKey(int(s.round)))}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.waiting[s.call]
	switch {
	case c == nil && r.keys.answered(s):
		return nil, nil, errStateAnswered
	case c == nil:
		return nil, nil, errStateNoCall
	case c.pending == nil || c.round != int(s.round):
		return nil, nil, errStateAnswered
	}
	if err := r.keys.redeem(now, s); err != nil {
		return nil, nil, err
	}
	ask := c.pending
	c.pending = nil
	c.timer.Stop()
	return ask, answer, nil
}

// await waits for the run's end or its next question, and answers the
// round with it. A client hanging up the round cancels the run.
func (r *inputRounds) await(ctx context.Context, c *inputCall) (sdk.Result, error) {
	for {
		select {
		case out := <-c.done:
			r.forget(c)
			return out.res, out.err
		case ask := <-c.requests:
			if res, ok := r.round(c, ask); ok {
				return res, nil
			}
		case <-ctx.Done():
			r.forget(c)
			return nil, ctx.Err()
		}
	}
}

// round answers the current request of c with ask, as an input-required
// result, and reports true; when c may not wait (the bounds), the item's
// question fails instead and round reports false.
func (r *inputRounds) round(c *inputCall, ask *serverRequest) (sdk.Result, bool) {
	r.mu.Lock()
	if err := r.register(c); err != nil {
		r.mu.Unlock()
		ask.reply <- requestReply{err: err}
		return nil, false
	}
	if c.round == 0 {
		c.request = requestHash(c.tool, c.args)
		c.args = nil
	}
	c.round++
	c.pending = ask
	state := r.keys.seal(&inputState{call: c.id, round: uint32(c.round), expires: time.Now().Add(r.wait),
		principal: c.principal, tool: c.tool, request: c.request, target: c.target})
	key := inputKey(c.round)
	c.timer = time.AfterFunc(r.wait, func() { r.expire(c, ask) })
	r.mu.Unlock()
	return c.result(sdk.InputRequestMap{key: ask.req}, state), true
}

// expire ends a call whose client did not come back with ask's answer.
func (r *inputRounds) expire(c *inputCall, ask *serverRequest) {
	r.mu.Lock()
	stale := c.pending != ask
	r.mu.Unlock()
	if !stale {
		r.forget(c)
	}
}

// forget removes c and cancels its tool.
func (r *inputRounds) forget(c *inputCall) {
	r.mu.Lock()
	if r.waiting[c.id] == c {
		delete(r.waiting, c.id)
		if r.by[c.principal]--; r.by[c.principal] <= 0 {
			delete(r.by, c.principal)
		}
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	r.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// closeAll cancels every waiting call; no new one starts.
func (r *inputRounds) closeAll() {
	r.mu.Lock()
	r.closed = true
	calls := make([]*inputCall, 0, len(r.waiting))
	for _, c := range r.waiting {
		calls = append(calls, c)
	}
	r.mu.Unlock()
	for _, c := range calls {
		r.forget(c)
	}
}

// inputKey is the key of round's question in inputRequests.
func inputKey(round int) string { return "q" + strconv.Itoa(round) }

// ask hands the client a question of the tool and waits for its answer.
func (c *inputCall) ask(ctx context.Context, req sdk.InputRequest) (sdk.InputResponse, error) {
	a := &serverRequest{call: c, req: req, reply: make(chan requestReply, 1)}
	select {
	case c.requests <- a:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	select {
	case r := <-a.reply:
		return r.answer, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// roundSession is the session of a tool running over rounds: its
// questions to the client become input-required results (inputRounds),
// and its notifications go on the stream of the current round.
type roundSession struct {
	*serverSession // the first round's: client info, capabilities, _meta
	call           *inputCall

	once   sync.Once
	logger *slog.Logger
}

var (
	_ bridge.ServerRequestHandler = (*roundSession)(nil)
	_ bridge.RootsLister          = (*roundSession)(nil)
	_ bridge.LogForwarder         = (*roundSession)(nil)
)

// CreateMessage asks the client to sample its model, in a round of the
// call.
func (s *roundSession) CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	if err := s.offers("sampling", func(c *sdk.ClientCapabilities) bool { return c.Sampling != nil }); err != nil {
		return nil, err
	}
	answer, err := s.call.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	switch a := answer.(type) {
	case *sdk.CreateMessageResult:
		return a, nil
	case *sdk.CreateMessageWithToolsResult:
		if len(a.Content) != 1 {
			return nil, fmt.Errorf("%w: the client's sampling answer has %d content blocks, want 1", toolkit.ErrBadParameter, len(a.Content))
		}
		return &sdk.CreateMessageResult{Meta: a.Meta, Content: a.Content[0], Model: a.Model, Role: a.Role, StopReason: a.StopReason}, nil
	}
	return nil, fmt.Errorf("%w: the client answered sampling with %T", toolkit.ErrBadParameter, answer)
}

// Elicit asks the client's user, in a round of the call.
func (s *roundSession) Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if err := s.offers("elicitation", func(c *sdk.ClientCapabilities) bool { return c.Elicitation != nil }); err != nil {
		return nil, err
	}
	answer, err := s.call.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	if a, ok := answer.(*sdk.ElicitResult); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w: the client answered elicitation with %T", toolkit.ErrBadParameter, answer)
}

// ListRoots asks the client for its roots, in a round of the call.
func (s *roundSession) ListRoots(ctx context.Context, params *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	if err := s.offers("roots", func(c *sdk.ClientCapabilities) bool { return c.RootsV2 != nil }); err != nil {
		return nil, err
	}
	if params == nil {
		params = &sdk.ListRootsParams{}
	}
	answer, err := s.call.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	if a, ok := answer.(*sdk.ListRootsResult); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w: the client answered roots with %T", toolkit.ErrBadParameter, answer)
}

var _ toolkit.Approver = (*roundSession)(nil)

// Approve asks the client's user whether a call the policy asks about may
// run (see serverSession.Approve), in a round of the call.
func (s *roundSession) Approve(ctx context.Context, req toolkit.ApprovalRequest) (bool, error) {
	return approveBy(ctx, s.Elicit, req)
}

// offers reports why the client cannot be asked for what, or nil.
func (s *roundSession) offers(what string, has func(*sdk.ClientCapabilities) bool) error {
	if caps := s.Capabilities(); caps == nil || !has(caps) {
		return fmt.Errorf("%w: the MCP client does not offer %s", toolkit.ErrNotImplemented, what)
	}
	return nil
}

// Progress reports progress on the stream of the current round.
func (s *roundSession) Progress(progress, total float64, message ...string) error {
	return s.call.cur.Load().Progress(progress, total, message...)
}

// Logger returns a logger whose records reach the client on the stream of
// the current round.
func (s *roundSession) Logger() *slog.Logger {
	s.once.Do(func() { s.logger = slog.New(&roundLogHandler{s: s}) })
	return s.logger
}

// ForwardLog passes an upstream server's log message on, on the stream of
// the current round.
func (s *roundSession) ForwardLog(ctx context.Context, params *sdk.LoggingMessageParams) error {
	return s.call.cur.Load().ForwardLog(ctx, params)
}

// roundLogHandler sends records through the logger of the current
// round's session, with the attributes and groups added to it, in order.
type roundLogHandler struct {
	s   *roundSession
	ops []func(slog.Handler) slog.Handler
}

func (h *roundLogHandler) handler() slog.Handler {
	out := h.s.call.cur.Load().Logger().Handler()
	for _, op := range h.ops {
		out = op(out)
	}
	return out
}

func (h *roundLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.handler().Enabled(ctx, l)
}

func (h *roundLogHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h *roundLogHandler) with(op func(slog.Handler) slog.Handler) slog.Handler {
	return &roundLogHandler{s: h.s, ops: append(h.ops[:len(h.ops):len(h.ops)], op)}
}

func (h *roundLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return h.with(func(x slog.Handler) slog.Handler { return x.WithAttrs(as) })
}

func (h *roundLogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(func(x slog.Handler) slog.Handler { return x.WithGroup(name) })
}
