package bridge

// SchemaTexter is implemented by tools that hold their schemas as JSON
// text rather than decoded (a connector's tools keep their server's
// schemas so: decoded, a schema costs tens of times its text). SchemaJSON
// returns the compact JSON of the input schema and of the output schema
// ("" when the tool has none), the same schemas InputSchema and
// OutputSchema decode. The text is a string so that it may be shared, by
// every tool with the same schema and by whoever registers it. A server
// registers the text as it is, so that a gateway never holds a decoded
// copy of each tool's schemas; it checks the text as untrusted input all
// the same.
type SchemaTexter interface {
	SchemaJSON() (in, out string)
}
