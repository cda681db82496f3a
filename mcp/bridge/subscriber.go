package bridge

import "context"

// Subscriber is implemented by resources whose changes can be followed:
// Subscribe asks for [github.com/llmkit/toolkit.ConnectorEventResourceUpdated]
// events about the resource, Unsubscribe stops asking. Calls are counted: a
// resource subscribed twice needs two Unsubscribe calls. The resources of a
// [github.com/llmkit/toolkit/mcp.Connector] implement it by subscribing on
// the remote server (again after every reconnection); an
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] calls it when its clients
// subscribe, so a gateway subscribes upstream only to what its clients
// follow.
type Subscriber interface {
	Subscribe(ctx context.Context) error
	Unsubscribe(ctx context.Context) error
}
