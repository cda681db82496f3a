package toolkit

import (
	"context"
	"time"
)

// Connector is a source of tools, prompts and resources other than the
// builtins: a remote MCP server, or the application's persistent store
// serving the "user" namespace.
//
// Run keeps the connector alive until ctx is cancelled or the source closes
// for good. The List methods return the connector's current items; the
// toolkit calls them when the connector reports that it is ready or that a
// list changed (through the onEvent callback handed to
// ToolkitDelegate.CreateConnector), never on the path of List or Lookup.
// They should answer from memory.
//
// A connector reports its state with StateChangeEvent: StatusReady once
// connected with its lists current, StatusFailed when it gives up.
// Toolkit.WaitConnectors waits for one of the two.
type Connector interface {
	Run(ctx context.Context) error
	ListTools(ctx context.Context) ([]Tool, error)
	ListPrompts(ctx context.Context) ([]Prompt, error)
	ListResources(ctx context.Context) ([]Resource, error)
}

// TemplateLister is implemented by connectors that serve resource templates
// (a remote MCP server's resources/templates/list). The toolkit checks for
// it with a type assertion, so the Connector interface stays as it is, and
// calls it when it calls ListResources: when the connector is ready and
// when it reports ConnectorEventResourceListChanged (MCP has no separate
// notification for templates). Like the List methods of Connector, it
// should answer from memory.
type TemplateLister interface {
	ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error)
}

// ConnectorEventKind identifies the kind of a ConnectorEvent.
type ConnectorEventKind int

const (
	// ConnectorEventStateChange reports a change of connector state; the
	// State field is set. The toolkit records it (see Toolkit.Connectors)
	// and delivers it to the subscribers of Toolkit.Subscribe, with the
	// state's URL and Namespace set, but not to the delegate's OnEvent. A
	// connector's ready state is applied and delivered only once the lists
	// it reports have been re-read and published.
	ConnectorEventStateChange ConnectorEventKind = iota
	// ConnectorEventToolListChanged reports that the tool list changed.
	ConnectorEventToolListChanged
	// ConnectorEventPromptListChanged reports that the prompt list changed.
	ConnectorEventPromptListChanged
	// ConnectorEventResourceListChanged reports that the resource list or
	// the resource template list changed.
	ConnectorEventResourceListChanged
	// ConnectorEventResourceUpdated reports that one resource's content
	// changed; the URI field is set.
	ConnectorEventResourceUpdated
	// ConnectorEventPolicyChanged reports that the policy (see WithPolicy)
	// may now hide or refuse other tools of Namespace ("" for every
	// namespace) than before: its rules were replaced, a changed tool
	// definition was approved. Receivers that show lists filtered by the
	// policy list again. It is delivered to the subscribers of
	// Toolkit.Subscribe, not to the delegate's OnEvent.
	ConnectorEventPolicyChanged
	// ConnectorEventSkillListChanged reports that the skills a source
	// serves changed (see SkillLister and Toolkit.ListSkills).
	ConnectorEventSkillListChanged
)

// String returns a short name for the kind.
func (k ConnectorEventKind) String() string {
	switch k {
	case ConnectorEventStateChange:
		return "state_change"
	case ConnectorEventToolListChanged:
		return "tool_list_changed"
	case ConnectorEventPromptListChanged:
		return "prompt_list_changed"
	case ConnectorEventResourceListChanged:
		return "resource_list_changed"
	case ConnectorEventResourceUpdated:
		return "resource_updated"
	case ConnectorEventPolicyChanged:
		return "policy_changed"
	case ConnectorEventSkillListChanged:
		return "skill_list_changed"
	}
	return "unknown"
}

// ConnectorEvent is one lifecycle or list-change notification.
type ConnectorEvent struct {
	// Kind identifies the event.
	Kind ConnectorEventKind
	// Connector is the connector that fired the event; nil for events about
	// builtins. The toolkit sets it; connectors need not.
	Connector Connector
	// Namespace is the namespace of the source the event is about
	// ("builtin" for builtins). The toolkit sets it.
	Namespace string
	// State is set for ConnectorEventStateChange.
	State ConnectorState
	// URI is set for ConnectorEventResourceUpdated.
	URI string
}

// StateChangeEvent returns a ConnectorEventStateChange event.
func StateChangeEvent(state ConnectorState) ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventStateChange, State: state}
}

// ToolListChangeEvent returns a ConnectorEventToolListChanged event.
func ToolListChangeEvent() ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventToolListChanged}
}

// PromptListChangeEvent returns a ConnectorEventPromptListChanged event.
func PromptListChangeEvent() ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventPromptListChanged}
}

// ResourceListChangeEvent returns a ConnectorEventResourceListChanged event.
func ResourceListChangeEvent() ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventResourceListChanged}
}

// SkillListChangeEvent returns a ConnectorEventSkillListChanged event.
func SkillListChangeEvent() ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventSkillListChanged}
}

// ResourceUpdatedEvent returns a ConnectorEventResourceUpdated event for uri.
func ResourceUpdatedEvent(uri string) ConnectorEvent {
	return ConnectorEvent{Kind: ConnectorEventResourceUpdated, URI: uri}
}

// ConnectorStatus is the phase of a connector's life.
type ConnectorStatus int

const (
	// StatusConnecting: the first connection attempt is under way.
	StatusConnecting ConnectorStatus = iota
	// StatusReady: connected; the item lists are current.
	StatusReady
	// StatusReconnecting: a connection attempt failed or the connection
	// was lost, and the connector is retrying with backoff; LastError says
	// why. A server that never answers (a stdio program that exits at
	// once, an HTTP server that is down) stays here, not in
	// StatusConnecting.
	StatusReconnecting
	// StatusFailed: the connector gave up (for example a stdio program
	// that is not found); the toolkit's Run restarts it with backoff, and
	// WaitConnectors returns at once for it until it is ready.
	StatusFailed
	// StatusStopped: the connector was removed or the toolkit stopped.
	StatusStopped
	// StatusNeedsAuthorization: the server needs an authorization (OAuth)
	// that a person is asked for, or whose last attempt failed and is
	// retried later; LastError says why. Calls fail at once meanwhile. The
	// connector goes on by itself once authorized.
	StatusNeedsAuthorization
)

// String returns a short name for the status.
func (s ConnectorStatus) String() string {
	switch s {
	case StatusConnecting:
		return "connecting"
	case StatusReady:
		return "ready"
	case StatusReconnecting:
		return "reconnecting"
	case StatusFailed:
		return "failed"
	case StatusStopped:
		return "stopped"
	case StatusNeedsAuthorization:
		return "needs_authorization"
	}
	return "unknown"
}

// MarshalText makes the status print as its name in JSON and logs.
func (s ConnectorStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ConnectorState describes a connector: who the remote is and how the
// connection stands.
type ConnectorState struct {
	// URL is the connector's URL as registered (so that it can be given to
	// RemoveConnector); Namespace the namespace it serves. The toolkit sets
	// both. The URL may carry secrets: show RedactURL(URL) to people.
	URL       string `json:"url,omitempty"`
	Namespace string `json:"namespace,omitempty"`

	// Name, Version and Title identify the remote server.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
	// Instructions are the server's usage instructions, if any.
	Instructions string `json:"instructions,omitempty"`
	// ProtocolVersion is the negotiated MCP protocol version.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Extensions are the extensions the remote server declares
	// (capabilities.extensions), "" when none. A server face advertises
	// them to its own clients.
	Extensions Extensions `json:"extensions,omitempty"`

	// Status is the connector's phase.
	Status ConnectorStatus `json:"status"`
	// LastError is the text of the last connection error, if any.
	LastError string `json:"last_error,omitempty"`
	// ConnectedSince is when the current connection was made (zero when not
	// connected).
	ConnectedSince time.Time `json:"connected_since,omitzero"`
}
