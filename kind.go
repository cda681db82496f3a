package toolkit

import "strconv"

// Kind is one of the four kinds of item a toolkit holds: tools, prompts,
// resources and resource templates. Its values run from 0 to NumKinds-1,
// so packages that keep something per kind use an array indexed by Kind:
//
//	var synced [toolkit.NumKinds]uint64
//	for k := range toolkit.NumKinds { ... synced[k] ... }
//
// The public selector of List and LookupType stays the [ListType] string;
// [Kind.ListType] and [ListType.Kind] convert between the two.
type Kind uint8

// The kinds of item, in the order List returns them.
const (
	// KindTool is the kind of a [Tool].
	KindTool Kind = iota
	// KindPrompt is the kind of a [Prompt].
	KindPrompt
	// KindResource is the kind of a [Resource].
	KindResource
	// KindTemplate is the kind of a [ResourceTemplate].
	KindTemplate
	// NumKinds is the number of kinds: [NumKinds]T holds one T per kind.
	NumKinds
)

// kindTypes is the ListType of each kind.
var kindTypes = [NumKinds]ListType{ListTypeTools, ListTypePrompts, ListTypeResources, ListTypeTemplates}

// listChangedKind is the event that reports a change of each kind's list.
// Templates share the resource event: MCP has no notification of its own
// for them (notifications/resources/list_changed covers
// resources/templates/list too).
var listChangedKind = [NumKinds]ConnectorEventKind{
	ConnectorEventToolListChanged,
	ConnectorEventPromptListChanged,
	ConnectorEventResourceListChanged,
	ConnectorEventResourceListChanged,
}

// ListType returns the [ListType] that selects items of kind k, or "" for
// a value that is not a kind.
func (k Kind) ListType() ListType {
	if k < NumKinds {
		return kindTypes[k]
	}
	return ""
}

// String returns the kind's [ListType] ("tool", "prompt", "resource",
// "template"), or "Kind(n)" for a value that is not a kind.
func (k Kind) String() string {
	if k < NumKinds {
		return string(kindTypes[k])
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ListChanged returns the [ConnectorEventKind] that reports a change of the
// list of items of kind k. Resources and templates share
// [ConnectorEventResourceListChanged], as they do in MCP. It returns
// [ConnectorEventStateChange] for a value that is not a kind.
func (k Kind) ListChanged() ConnectorEventKind {
	if k < NumKinds {
		return listChangedKind[k]
	}
	return ConnectorEventStateChange
}

// Kind returns the kind t selects; ok is false for "" (which List reads as
// tools, prompts and resources together) and for unknown types.
func (t ListType) Kind() (k Kind, ok bool) {
	for k := range NumKinds {
		if kindTypes[k] == t {
			return k, true
		}
	}
	return 0, false
}

// Kinds returns the kinds whose lists an event of kind ev reports changed,
// in [Kind] order: one kind for the tool and prompt list events, both
// [KindResource] and [KindTemplate] for
// [ConnectorEventResourceListChanged], and none for the other events. It is
// the inverse of [Kind.ListChanged].
func (ev ConnectorEventKind) Kinds() []Kind {
	var out []Kind
	for k := range NumKinds {
		if listChangedKind[k] == ev {
			out = append(out, k)
		}
	}
	return out
}
