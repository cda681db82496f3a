// Package skill holds the skill contract: a folder of instructions in the
// Agent Skills layout (a SKILL.md whose YAML front matter names and
// describes the skill, instructions in its body, supporting files beside
// it) with a manifest of SHA-256 digests, as the MCP skills extension
// (SEP-2640, [ExtensionID]) serves it.
//
//	s, err := skill.New([]byte("---\nname: greet\ndescription: Greets people. Use when asked to say hello.\n---\nSay hello.\n"), nil)
//	...
//	body, err := skill.Body(ctx, s) // "Say hello.\n", its front matter checked
//
// Skills come from three places, all checked alike: [New] builds one in
// memory (a builtin), [Load] reads a directory through an [io/fs.FS] (the
// store's, confined to its root), and [FromEntry] takes an SEP-2640 entry
// and a reader (a remote server's). A skill's front matter follows the
// Agent Skills specification ([CheckName]: 1 to 64 lowercase letters,
// digits and single inner hyphens; a description of 1 to 1024
// characters; compatibility of at most 500), is a plain YAML mapping (no
// anchors, aliases or custom tags, at most 64 KiB, 4096 nodes, 32
// levels), and a skill holds at most 512 files and 16 MiB ([Limits]),
// which Load checks from the directory listing before reading a byte.
// Symbolic links, "." and ".." segments and absolute paths are refused.
//
// Every read through a Skill is verified: [Skill.ReadFile] answers only
// files of the manifest, and content whose size or digest differs fails
// wrapping toolkit.ErrIntegrity, as does a SKILL.md whose front matter
// differs from the entry's ([Body]).
package skill
