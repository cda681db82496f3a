package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmkit/toolkit"
)

// maxCell bounds the width of a description cell.
const maxCell = 60

// writeConnectors prints one row per connector: its namespace, status and
// the server it reached.
func writeConnectors(w io.Writer, states []toolkit.ConnectorState) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tSTATUS\tSERVER")
	for _, st := range states {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", st.Namespace, st.Status, strings.TrimSpace(st.Name+" "+st.Version))
	}
	return tw.Flush()
}

// writeItems prints one row per item of a List answer, in its order:
// tools, then prompts, then resources, each by namespace.
func writeItems(w io.Writer, items []toolkit.Item) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKIND\tNAME\tDESCRIPTION")
	for _, it := range items {
		name := it.Name
		if it.Type == toolkit.ListTypeResources {
			name = it.URI
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.Namespace, it.Type, name, cell(describe(it)))
	}
	return tw.Flush()
}

// describe returns the one-line description of an item: a prompt's title,
// else its description, else its name.
func describe(it toolkit.Item) string {
	if p, ok := it.Value.(toolkit.Prompt); ok && p.Title() != "" {
		return p.Title()
	}
	if d := it.Description(); d != "" {
		return d
	}
	return it.Name
}

// cell makes s fit one table cell: one line, at most maxCell characters.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxCell {
		return string(r[:maxCell-1]) + "…"
	}
	return s
}
