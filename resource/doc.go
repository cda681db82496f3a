// Package resource defines the Resource contract of the toolkit and the
// constructors that make resources from strings, bytes, JSON values and
// readers.
//
// # Constructors
//
// [Text] wraps a string as text/plain, [JSON] wraps a Go value or raw JSON as
// application/json, [Data] sniffs the MIME type of a byte slice, [Blob] takes
// bytes with a MIME type the caller already knows, and [Read] reads a reader
// eagerly. [Must] is the panicking shorthand for static data and tests.
// [WithURI] and [WithDescription] override one field of an existing resource.
// [NewTemplate] makes a [Template], a family of resources named by an RFC
// 6570 URI template ([ParseURITemplate], [URITemplate]), as MCP resource
// templates are.
//
// Every name must be an identifier: letters, digits and underscores, not
// starting with a digit, at most 64 bytes. A name never carries a file
// extension; to let an extension guide MIME detection, pass a reader whose
// Name method returns a file name (an *os.File does) or the [WithFileName] option
// to [Read].
//
// # Content rules
//
// Resources made here are immutable and safe for concurrent use. Byte slices
// passed to a constructor are copied, and the Read method of a resource
// returns a fresh copy on every call, so no caller can change a resource's
// content after construction. That Read method never fails and ignores its
// context.
//
// The content of every text resource (see [IsText]) made by [Text], [Data],
// [Read] or [JSON] is valid UTF-8, and the MIME type of every text/* resource
// carries "; charset=utf-8": [Text] reports [TypeText],
// "text/plain; charset=utf-8", the form [net/http.DetectContentType] uses.
// Compare types with [IsText], [IsJSON] or [mime.ParseMediaType], not as
// strings. Text content is converted to UTF-8 as follows:
//
//   - a valid UTF-8 string given to [Text] is kept exactly as it is;
//   - a UTF-8 byte order mark is removed;
//   - UTF-16 with a byte order mark is decoded with its declared byte order;
//   - UTF-16 without a byte order mark ([Data] and [Read] only) is
//     recognised by its pattern of NUL bytes (ASCII-range characters have
//     one zero byte in each pair, always on the same side), and accepted
//     only when the decoded text holds no control characters other than
//     tab, line feed, form feed and carriage return; UTF-16 text with few
//     ASCII-range characters, such as Chinese, is not recognised without a
//     byte order mark;
//   - other valid UTF-8 is kept as it is;
//   - text that is mostly UTF-8 (at least as many well-formed multi-byte
//     sequences as stray bytes, as in text cut in the middle of a character)
//     has its stray bytes replaced with U+FFFD;
//   - anything else is decoded as Windows-1252, the superset of Latin-1 that
//     web browsers use; the five bytes Windows-1252 leaves undefined map to
//     the C1 control characters of the same value, so no byte is lost.
//
// Invalid UTF-8 inside raw JSON strings is replaced with U+FFFD. [Blob] is
// the exception to all of this: it stores the bytes exactly as given.
//
// # MIME detection
//
// [Data] and [Read] sniff the content with [net/http.DetectContentType]. When
// that is inconclusive — application/octet-stream, or text/plain — the file
// extension (from [Read] only) decides: any type for bytes that look binary,
// only a text type for bytes that look like text, so a text file named
// "x.png" stays text/plain. Common text extensions (.md, .csv, .json, .yaml,
// ...) come from a built-in table, the rest from [mime.TypeByExtension].
// JSON content is not sniffed: use [JSON] or a .json extension.
//
// # Errors
//
// Every error returned here wraps toolkit.ErrBadParameter (message "bad
// parameter"; test with errors.Is) and names the resource.
//
// # URIs
//
// Every constructed resource gets a URI of the form
//
//	mem:<name>/<process>-<n>
//
// where <process> is 16 hex digits drawn at random once per process and <n>
// is a per-process counter, so two resources never share a URI within a
// process, and across processes only with negligible probability (64 random
// bits). Two outputs of the same tool are therefore always distinguishable.
// [WithURI] replaces the URI; [CheckURI] tells whether a URI is acceptable.
package resource
