package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
	"github.com/llmkit/toolkit/prompt"
)

// errSessionClosed is the cancellation cause of calls whose session the
// supervisor closed.
var errSessionClosed = errors.New("the connection to the server was lost during the request")

// JSON-RPC error codes the SDK uses for failures of its own side: an error
// carrying one is not an answer of the server.
const (
	codeUnknown       = -32001
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// isRemoteError reports an error answer of the server: the session works.
func isRemoteError(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	switch we.Code {
	case codeUnknown, codeClientClosing, codeServerClosing, codeRejected:
		return false
	}
	return true
}

// isTransportError reports an error of the way to the server rather than
// of its answer.
func isTransportError(err error) bool {
	var we *jsonrpc.Error
	if errors.As(err, &we) && !isRemoteError(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// brokenConn reports the errors of a connection that failed under a
// request: a transport error, or a pipe or file closed under its write.
func brokenConn(err error) bool {
	return isTransportError(err) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE)
}

// notDelivered reports errors that prove the server did not process the
// request: the client refused to send it on a closing connection, or the
// server answered that it does not know the session (it restarted).
func notDelivered(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing)
}

// withTraceContext puts the W3C trace context of ctx, if any, in the _meta
// of an outgoing request, so that the server's spans join the caller's
// trace (through a gateway, the downstream client's).
func withTraceContext(ctx context.Context, params sdk.Params) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	meta := params.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	bridge.InjectTraceMeta(ctx, meta)
	params.SetMeta(meta)
}

// progressParams are the parameters of a request that can carry a progress
// token.
type progressParams interface {
	sdk.Params
	SetProgressToken(any)
}

// request sends params through [Connector.do] with call (a method of
// sdk.ClientSession), tagging them on each attempt with the caller's
// request `_meta` (callerMeta), the trace context and the progress token
// of the caller.
func request[P progressParams, R any](c *Connector, ctx context.Context, what reqName, failed error, safe bool, params P, call func(*sdk.ClientSession, context.Context, P) (R, error)) (R, error) {
	var res R
	meta, err := callerMeta(ctx)
	if err != nil {
		return res, fmt.Errorf("%s of server %s: %w", what, c.serverName(), err)
	}
	err = c.do(ctx, what, failed, safe, func(ctx context.Context, l *live, token string) error {
		withCallerMeta(params, meta)
		withTraceContext(ctx, params)
		c.withLogLevel(l.sess, params)
		if token != "" {
			params.SetProgressToken(token)
		}
		var err error
		res, err = call(l.sess, ctx, params)
		return err
	})
	return res, err
}

// reqName names a request in errors; it is formatted only when needed.
type reqName struct{ kind, name string }

func (r reqName) String() string { return r.kind + " " + strconv.Quote(r.name) }

// do is doRequest with the secrets of URLs removed from its
// error: net/http quotes the request URL, whose query may hold one.
func (c *Connector) do(ctx context.Context, what reqName, failed error, safe bool, f func(ctx context.Context, l *live, token string) error) error {
	return toolkit.RedactError(c.doRequest(ctx, what, failed, safe, f))
}

// doRequest runs one request for a caller on the ready session and translates
// its errors; what names the request ("tool \"x\""), failed is the sentinel
// for an error answer of the server. Any failure that is not an answer of
// the server makes do ping the session, and a failed ping ends it.
//
// A request is sent once more (on the next session when this one is lost,
// waiting for it like any call) when that cannot do harm: when the failure
// proves that the server did not process it, or when the request is safe
// to repeat (safe: reads, and tools annotated read-only or idempotent). A
// safe request that a stale connection failed on a working session goes
// again on that session first, which does not count: a server that
// restarted breaks both the stale connection and, a moment later, the
// session. A request that may have run is never repeated.
func (c *Connector) doRequest(ctx context.Context, what reqName, failed error, safe bool, f func(ctx context.Context, l *live, token string) error) error {
	if c.o.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.callTimeout)
		defer cancel()
	}
	release, err := c.takeSlot(ctx)
	if err != nil {
		return fmt.Errorf("%s of server %s: %w", what, c.serverName(), err)
	}
	defer release()
	// stale is 1 once the request was sent again on the same session
	// because a stale connection failed it (below): that re-send does not
	// count, so first holds until the request was sent again for any
	// other reason.
	for try, stale := 0, 0; ; try++ {
		first := try == stale
		sctx, l, err := c.up.session(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		cctx, token, done := c.calls.begin(sctx, l)
		err = f(cctx, l, token)
		cause := context.Cause(cctx)
		in := inflightFrom(cctx)
		got := in.delivery()
		if err == nil || cctx.Err() == nil || errors.Is(err, sdk.ErrConnectionClosed) || !l.postsCancellations() {
			// The SDK sends notifications/cancelled (in the background)
			// only for a request it gave up because its context ended.
			in.settle()
		}
		// Before done ends cctx: the answer stream of an answered request
		// ends by itself (answerstream.go).
		in.finish(err == nil || isRemoteError(err), cmp.Or(c.o.hooks.answeredWait, answeredStreamWait))
		done()
		var badJSON *json.MarshalerError
		switch {
		case err == nil && in != nil && in.tooDeep.Load():
			// The request ran; its answer is unusable (package internal/wire).
			return fmt.Errorf("%w: %s of server %s: the answer nests more than %d levels deep", errs.ErrToolFailed, what, c.serverName(), wire.MaxDepth)
		case err == nil:
			return nil
		case first && c.up.again(err):
			// Refused before the server saw it (the user authorizes
			// meanwhile): it goes again.
			continue
		case ctx.Err() != nil:
			return fmt.Errorf("%s of server %s: %w", what, c.serverName(), context.Cause(ctx))
		case errors.As(err, &badJSON):
			// The request could not be encoded (invalid JSON given as a
			// json.RawMessage): nothing was sent.
			return fmt.Errorf("%w: %s of server %s: input is not valid JSON: %v", errs.ErrBadParameter, what, c.serverName(), badJSON.Err)
		case got == deliveryRefused:
			// The server answered the request itself that it does not know
			// the session: it never ran it, so it may go on the next one,
			// whatever happened to this session meanwhile.
			c.lost(l, err)
			if first {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		case (notDelivered(err) || in.neverWritten(l) && (errors.Is(cause, errSessionClosed) || brokenConn(err))) &&
			got != deliveryReceived && !in.mayHaveArrived():
			// Refused before it was sent, or never written on a connection
			// that broke (a session dropped under the call, closed
			// meanwhile or not): it goes on the next session, safe or not.
			c.lost(l, err)
			if first {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		case errors.Is(cause, errSessionClosed):
			if safe && first {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), errSessionClosed)
		case isRemoteError(err):
			// The server's *jsonrpc.Error stays in the chain: a gateway
			// passes its code and message on.
			return fmt.Errorf("%w: %s of server %s: %w", failed, what, c.serverName(), err)
		}
		if perr := c.ping(sctx, l); perr != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s of server %s: %w", what, c.serverName(), context.Cause(ctx))
			}
			c.lost(l, fmt.Errorf("%v; ping failed: %v", err, perr))
			if safe && first {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		}
		if isTransportError(err) {
			// The session works, the transport failed this request (a
			// stale keep-alive connection to a restarted server, say). The
			// request goes again on the same session; should that session
			// be lost under it meanwhile (its server restarted), it may
			// still go once more on the next.
			if safe && first && stale == 0 {
				stale++
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		}
		// The session works: the answer to this request was broken.
		return fmt.Errorf("%w: %s of server %s: %v", failed, what, c.serverName(), err)
	}
}

// callTool calls a remote tool and maps its result.
func (c *Connector) callTool(ctx context.Context, t *remoteTool, input json.RawMessage) (any, error) {
	what := reqName{"tool", t.name}
	// The toolkit's Call validated the input against the tool's schema
	// already: it is not scanned again here. Invalid JSON from a direct
	// Run is refused when the request is encoded (see Connector.do).
	var args any
	if in := bytes.TrimSpace(input); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		if in[0] != '{' {
			return nil, fmt.Errorf("%w: %s of server %s: input must be a JSON object", errs.ErrBadParameter, what, c.serverName())
		}
		args = json.RawMessage(in)
	}
	safe := t.meta.ReadOnlyHint || t.meta.IdempotentHint
	params := &sdk.CallToolParams{Name: t.name, Arguments: args}
	ctx, passed := passRounds(ctx, t, &params.InputResponses, &params.RequestState)
	res, err := request(c, ctx, what, errs.ErrToolFailed, safe, params, (*sdk.ClientSession).CallTool)
	if err != nil {
		return nil, err
	}
	if err := passedRound(res, passed); err != nil {
		return nil, err
	}
	return c.toolResult(t.name, res)
}

// getPrompt renders a remote prompt with prompts/get.
func (c *Connector) getPrompt(ctx context.Context, p *remotePrompt, input json.RawMessage) (*prompt.Rendered, error) {
	what := reqName{"prompt", p.def.Name}
	args, err := promptArguments(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of server %s: %v", errs.ErrBadParameter, what, c.serverName(), err)
	}
	params := &sdk.GetPromptParams{Name: p.def.Name, Arguments: args}
	ctx, passed := passRounds(ctx, p, &params.InputResponses, &params.RequestState)
	res, err := request(c, ctx, what, errs.ErrToolFailed, true, params, (*sdk.ClientSession).GetPrompt)
	if err != nil {
		return nil, err
	}
	if err := passedRound(res, passed); err != nil {
		return nil, err
	}
	if c.o.maxResult > 0 {
		size := int64(len(res.Description))
		for _, m := range res.Messages {
			if m != nil {
				size += contentSize(m.Content)
			}
		}
		if err := c.checkSize(what, size); err != nil {
			return nil, err
		}
	}
	if err := checkMeta(res.Meta); err != nil {
		return nil, fmt.Errorf("%w: %s of server %s: %w", errs.ErrToolFailed, what, c.serverName(), err)
	}
	out := &prompt.Rendered{Description: res.Description, Meta: dataMeta(res.Meta)}
	base := c.resultURI("prompt", p.def.Name)
	for i, m := range res.Messages {
		if m == nil {
			continue
		}
		r, err := c.contentResource(m.Content, fmt.Sprintf("%s/%d", base, i), p.def.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s of server %s: message %d: %v", errs.ErrToolFailed, what, c.serverName(), i, err)
		}
		r = carry(r, []sdk.Content{m.Content}, nil, nil)
		role := prompt.RoleUser
		if m.Role == "assistant" {
			role = prompt.RoleAssistant
		}
		out.Messages = append(out.Messages, prompt.Message{Role: role, Content: r})
	}
	return out, nil
}

// promptArguments turns a JSON object into prompt arguments: strings as
// they are, other values as their JSON text.
func promptArguments(input json.RawMessage) (map[string]string, error) {
	in := bytes.TrimSpace(input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil {
		return nil, errors.New("input must be a JSON object")
	}
	args := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			args[k] = s
		} else {
			args[k] = string(v)
		}
	}
	return args, nil
}

// readResource reads a resource (item, of the URI) with resources/read,
// returning its bytes, MIME type and `_meta`.
func (c *Connector) readResource(ctx context.Context, item any, uri string) (bridge.Contents, error) {
	what := reqName{"resource", uri}
	params := &sdk.ReadResourceParams{URI: uri}
	ctx, passed := passRounds(ctx, item, &params.InputResponses, &params.RequestState)
	res, err := request(c, ctx, what, errs.ErrNotFound, true, params, (*sdk.ClientSession).ReadResource)
	if err != nil {
		return bridge.Contents{}, err
	}
	if err := passedRound(res, passed); err != nil {
		return bridge.Contents{}, err
	}
	if err := c.checkSize(what, resourceSize(res.Contents...)); err != nil {
		return bridge.Contents{}, err
	}
	var pick *sdk.ResourceContents
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		if pick == nil || (rc.URI == uri && pick.URI != uri) {
			pick = rc
		}
	}
	if pick == nil {
		return bridge.Contents{}, fmt.Errorf("%w: %s of server %s: no contents", errs.ErrNotFound, what, c.serverName())
	}
	if err := checkMeta(pick.Meta); err != nil {
		return bridge.Contents{}, fmt.Errorf("%w: %s of server %s: %w", errs.ErrToolFailed, what, c.serverName(), err)
	}
	rc := bridge.Contents{Data: pick.Blob, MIMEType: pick.MIMEType, Meta: dataMeta(pick.Meta)}
	if pick.Blob == nil {
		rc.Data = []byte(pick.Text)
	}
	return rc, nil
}
