// Package schemaguard checks a JSON Schema that comes from outside the
// program (a remote server's tool, a definition handed to a model encoder,
// a tool's own hand-made schema) before anything walks it, so that no
// schema can make a walker recurse without end, run out of stack or spend
// unbounded time or memory.
//
// [Check] refuses, with an error wrapping errs.ErrBadParameter that says
// what and where (a JSON Pointer into the schema):
//
//   - subschemas nested more than [MaxDepth] levels, more than
//     [MaxSubschemas] of them, a keyword with more than [MaxFanOut]
//     members, an enum of more than [MaxEnum] values, JSON values (const,
//     enum, default, examples, unknown keywords) nested more than
//     [MaxValueDepth] levels, a schema of more than about [MaxBytes];
//   - a schema graph that is not a tree (a Go value that shares or loops
//     back to a subschema);
//   - a $ref (or $dynamicRef) that does not resolve inside the schema;
//   - a $ref cycle that checks a value against itself without going into
//     a part of the value: {"$ref":"#"}, two definitions that refer to
//     each other through allOf, a definition whose "not" refers to
//     itself. Validation of such a schema never ends;
//   - a subschema whose check of one value costs more than [MaxWork]
//     (subschemas reached through $refs counted once for every path that
//     reaches them, each weighed with its enum, properties and required
//     lists), or in-place chains of subschemas more than [MaxDepth] long.
//
// Recursion that goes into a part of the value at each turn is legitimate
// and accepted: a tree node whose "children" items $ref the node, a JSON
// value type whose array items and object properties $ref it. Validating
// such a schema is bounded by the value, not by the schema, so its cost is
// checked per value: the [Plan] that Check returns for it (nil for every
// other schema, which costs nothing per value) refuses, before validation,
// a value nested more than [MaxInstanceDepth] levels, one that would
// make validation recurse more than [MaxNesting] subschemas deep, or a
// part of it that would be checked at a cost of more than [MaxWork] (a
// schema whose recursion checks the same part of the value through two
// paths doubles the work at every level). The same Plan is made for a
// schema without recursion whose worst case passes those bounds, so that
// only the values that reach it pay.
//
// Check runs once per schema, where the schema is resolved and cached;
// Plan.Check runs once per value, and only for the schemas that need it.
package schemaguard
