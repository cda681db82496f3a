package toolkit_test

import (
	"errors"
	"fmt"

	"github.com/llmkit/toolkit"
)

// An error quoting a request URL loses the URL's secrets and keeps its
// chain.
func ExampleRedactError() {
	err := fmt.Errorf("%w: Post \"https://mcp.example.com/mcp?api_key=s3cret\": connection refused", toolkit.ErrUnavailable)
	red := toolkit.RedactError(err)
	fmt.Println(red)
	fmt.Println(errors.Is(red, toolkit.ErrUnavailable))
	// Output:
	// unavailable: Post "https://mcp.example.com/mcp": connection refused
	// true
}
