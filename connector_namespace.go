package toolkit

import "context"

type connectorNamespaceKey struct{}

// ConnectorNamespace returns the namespace under which the toolkit runs the
// connector whose Run was given ctx, or "" when ctx does not come from the
// toolkit. A connector uses it to name itself in its logs and errors: its
// URL may be long or hold secrets.
func ConnectorNamespace(ctx context.Context) string {
	ns, _ := ctx.Value(connectorNamespaceKey{}).(string)
	return ns
}

// withConnectorNamespace returns ctx carrying the namespace of the
// connector it is given to.
func withConnectorNamespace(ctx context.Context, ns string) context.Context {
	return context.WithValue(ctx, connectorNamespaceKey{}, ns)
}
