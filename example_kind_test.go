package toolkit_test

import (
	"fmt"

	"github.com/llmkit/toolkit"
)

// A table with one entry per kind of item is an array indexed by Kind.
func ExampleKind() {
	var changes [toolkit.NumKinds]int
	for _, ev := range []toolkit.ConnectorEventKind{
		toolkit.ConnectorEventToolListChanged,
		toolkit.ConnectorEventResourceListChanged,
	} {
		for _, k := range ev.Kinds() {
			changes[k]++
		}
	}
	for k := range toolkit.NumKinds {
		fmt.Printf("%-8s list type %-8q changes %d (event %v)\n", k, k.ListType(), changes[k], k.ListChanged())
	}
	k, ok := toolkit.ListTypePrompts.Kind()
	fmt.Println(k, ok)
	// Output:
	// tool     list type "tool"   changes 1 (event tool_list_changed)
	// prompt   list type "prompt" changes 0 (event prompt_list_changed)
	// resource list type "resource" changes 1 (event resource_list_changed)
	// template list type "template" changes 1 (event resource_list_changed)
	// prompt true
}
