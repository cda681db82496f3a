package mcp

import (
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stateless reports whether sess negotiated the stateless protocol
// (StatelessProtocolVersion or newer): no session to lose, requests that
// carry the client's version, capabilities and log level in their _meta,
// and input-required results instead of server requests.
func stateless(sess *sdk.ClientSession) bool {
	init := sess.InitializeResult()
	return init != nil && init.ProtocolVersion >= StatelessProtocolVersion
}

// askedVersion returns the protocol version the next handshake asks for:
// the configured one, unless an earlier handshake asking for the stateless
// version timed out (a server that never answers server/discover) or the
// connector authorizes with OAuth on the default version
// (statefulForOAuth), in which case StatefulProtocolVersion, the newest of
// the initialize handshake.
func (c *Connector) askedVersion() string {
	if c.o.protocolVersion >= StatelessProtocolVersion && (c.link.preferStateful.Load() || c.statefulForOAuth() || c.statefulForClients()) {
		return StatefulProtocolVersion
	}
	return c.o.protocolVersion
}

// statefulForOAuth reports whether the connector asks for
// StatefulProtocolVersion because it authorizes with OAuth and was not
// told a version. The go-sdk's client falls back to initialize on any
// failure of server/discover, an authorization that waits for the user
// included: the fallback's initialize then races the user's answer, and
// whether the attempt fails (and the wait is reported) or succeeds on the
// older protocol depends on who is faster.
func (c *Connector) statefulForOAuth() bool {
	return c.o.oauth != nil && !c.o.protocolAsked
}

// statefulForClients reports whether the connector asks for
// StatefulProtocolVersion because it keeps an upstream session per client
// (OptPerClient) and was not told a version: those sessions exist to carry
// a client's roots and the server's sampling and elicitation requests,
// which a server of 2026-07-28 may not send.
func (c *Connector) statefulForClients() bool {
	return c.o.perClient > 0 && !c.o.protocolAsked
}

// handshakeFailed records a handshake that asked for version and failed
// (ctx is the attempt's): one that asked for the stateless version and ran out of time
// makes the next ask for StatefulProtocolVersion (the server may ignore
// the unknown server/discover rather than refuse it, which the SDK's
// fallback to initialize needs); one that then fails so too makes the
// next ask for the stateless version again, so that a server merely slow
// to answer is not kept on the older protocol.
func (c *Connector) handshakeFailed(ctx context.Context, version string) {
	if c.o.protocolVersion < StatelessProtocolVersion {
		return
	}
	switch {
	case version >= StatelessProtocolVersion && errors.Is(ctx.Err(), context.DeadlineExceeded):
		c.link.preferStateful.Store(true)
	case version < StatelessProtocolVersion:
		c.link.preferStateful.Store(false)
	}
}

// withLogLevel puts the log level the connector asks for (OptLogLevel) in
// the _meta of a request on a stateless session, where it replaces
// logging/setLevel; it does nothing on other sessions, on servers without
// logging, and when the request names a level already.
func (c *Connector) withLogLevel(sess *sdk.ClientSession, params sdk.Params) {
	if c.o.logLevel == "" || !stateless(sess) {
		return
	}
	if caps := sess.InitializeResult().Capabilities; caps == nil || caps.Logging == nil {
		return
	}
	meta := params.GetMeta()
	if _, ok := meta[sdk.MetaKeyLogLevel]; ok {
		return
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta[sdk.MetaKeyLogLevel] = c.o.logLevel
	params.SetMeta(meta)
}
