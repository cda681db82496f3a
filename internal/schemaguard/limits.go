package schemaguard

// Limits on a schema and on the values checked against it. Each is far
// above what a hand-written or generated tool schema needs; a schema or a
// value past one is refused with an error that names the limit.
const (
	// MaxDepth bounds how deeply subschemas nest in a schema document
	// ({"properties":{"a":{...}}} is one level), and how long a chain of
	// subschemas that check the same value may be (allOf, $ref, not, ...).
	MaxDepth = 64
	// MaxSubschemas bounds the subschemas of a schema, the root included.
	MaxSubschemas = 10_000
	// MaxFanOut bounds the members of one keyword: the entries of
	// properties, patternProperties, $defs, definitions,
	// dependentSchemas, dependencies and dependentRequired, the branches
	// of allOf, anyOf and oneOf, the elements of prefixItems and of an
	// items array, the names of required, the values of examples.
	MaxFanOut = 1_000
	// MaxEnum bounds the values of one enum.
	MaxEnum = 10_000
	// MaxValueDepth bounds the nesting of the JSON values a schema holds:
	// const, enum values, default, examples and unknown keywords.
	MaxValueDepth = 32
	// MaxBytes bounds the size of a schema, about the length of its JSON.
	MaxBytes = 1 << 20
	// MaxWork bounds the work of checking one part of a value (the value
	// itself, one of its members or elements): the subschemas it is
	// checked against, each counted once for every path of $refs and
	// combinators that reaches it, and weighed one plus the length of its
	// enum, properties, patternProperties, required and dependency lists.
	MaxWork = 50_000
	// MaxInstanceDepth bounds the nesting of a value checked against a
	// recursive schema (one whose $refs go back into a part of the value).
	MaxInstanceDepth = 256
	// MaxNesting bounds how deep validation recurses: the subschemas on
	// the longest chain from the root to a part of the value.
	MaxNesting = 2_048
)

// maxPlanEntries bounds the size of a Plan: the subschemas it keeps for
// the starting points of a value's parts, with their multiplicities.
const maxPlanEntries = 1 << 18

// Bounds CheckJSON checks on a schema's JSON before decoding it:
// jsonschema-go decodes each subschema again for every schema it is in, so
// its cost grows with the nesting of each byte, not with the bytes alone.
const (
	// maxJSONDepth: two levels for each level of subschemas (a keyword,
	// then a map or an array), and the values a schema holds.
	maxJSONDepth = 2*MaxDepth + MaxValueDepth + 8
	// maxNestedBytes bounds the sum, over the bytes of the JSON, of the
	// number of objects and arrays each is in: 16 MiB is a schema of 1
	// MiB at an average depth of 16.
	maxNestedBytes = 16 << 20
)
