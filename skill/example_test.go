package skill_test

import (
	"context"
	"fmt"

	"github.com/llmkit/toolkit/skill"
)

func Example() {
	md := "---\nname: greet\ndescription: Greets people. Use when asked to say hello.\n---\nSay hello, then read greetings.md.\n"
	s, err := skill.New([]byte(md), map[string][]byte{"greetings.md": []byte("Hello!\n")})
	if err != nil {
		panic(err)
	}
	body, err := skill.Body(context.Background(), s)
	if err != nil {
		panic(err)
	}
	fmt.Print(skill.Name(s), ": ", s.Frontmatter().Description, "\n", body)
	for _, f := range s.Files() {
		fmt.Println(f.Path, f.Size)
	}
	// Output:
	// greet: Greets people. Use when asked to say hello.
	// Say hello, then read greetings.md.
	// SKILL.md 112
	// greetings.md 7
}
