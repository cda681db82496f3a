package model

import (
	"context"
	"encoding/json"

	"github.com/llmkit/toolkit"
)

// auditor is a Caller that records the calls refused before its Call, so
// that its audit holds every call a model asked for (*toolkit.Toolkit
// implements it: Toolkit.Audit).
type auditor interface {
	Audit(ctx context.Context, e toolkit.AuditEntry)
}

// auditRefusal records, in the toolkit's audit, a call the dispatcher
// refused before calling the toolkit: a name that resolves to nothing,
// an item gone, arguments that are not a JSON object, a call stopped
// before it started. It does nothing for a Caller without an audit.
func (d *Dispatcher) auditRefusal(ctx context.Context, c ToolCall, r Result) {
	a, ok := d.tk.(auditor)
	if !ok {
		return
	}
	ns, name := "", c.Name
	if r.Item.Value != nil {
		ns, name = r.Item.Namespace, r.Item.Name
	}
	a.Audit(ctx, toolkit.AuditEntry{Namespace: ns, Name: name, Arguments: json.RawMessage(c.Arguments), Err: r.Err})
}
