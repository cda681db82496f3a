// Package search ranks tools for a query: what a model or an MCP client
// that cannot be sent every tool uses to find the few it needs. Both faces
// of the toolkit use it (package model's Catalog and Disclosure, and the
// server face's search_tools meta-tool), so a query finds the same tools
// in process and over MCP.
//
// [Index] is built once over a set of toolkit items; [ToolIndex] takes
// documents ([Doc], see [DocOf]) that come and go one at a time, with
// changes that cost in proportion to what changed. Both are Okapi BM25
// over a tool's name, namespace, title, description and parameters, split
// on camelCase and snake_case, stemmed (Porter's algorithm) and joined by
// a small table of synonyms a user would expect; ToolIndex also ranks its
// best hits again by how much of the tool's name the query covers, and
// fuses in an [Embedder]'s vectors when given one ([WithEmbedder]).
// [Summary] cuts a description to the line a search result shows.
//
//	x := search.NewToolIndex()
//	_ = x.Put(ctx, search.DocOf("github.create_issue", item))
//	hits, _ := x.Search(ctx, "open a bug report", 5, nil)
package search
