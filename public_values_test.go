package toolkit

import (
	"slices"
	"testing"

	"github.com/llmkit/toolkit/internal/names"
)

// The public names are declared with their values, so that go doc shows
// them; they must stay those of the rules the module applies.
func TestPublicNamesAreTheRules(t *testing.T) {
	if BuiltinNamespace != names.BuiltinNamespace || UserNamespace != names.UserNamespace {
		t.Errorf("namespaces %q, %q; the rules reserve %q, %q", BuiltinNamespace, UserNamespace, names.BuiltinNamespace, names.UserNamespace)
	}
	if UserConnectorURI != "connector:"+names.UserNamespace {
		t.Errorf("UserConnectorURI = %q", UserConnectorURI)
	}
	if !slices.Equal(ReservedNames, names.ReservedNames) || !slices.Equal(ReservedNamespaces, names.ReservedNamespaces) {
		t.Errorf("reserved %v and %v; the rules reserve %v and %v", ReservedNames, ReservedNamespaces, names.ReservedNames, names.ReservedNamespaces)
	}
}
