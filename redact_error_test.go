package toolkit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedactError(t *testing.T) {
	if RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
	plain := errors.New("no url here")
	if RedactError(plain) != plain {
		t.Error("an error without secrets is not returned as it is")
	}
	err := fmt.Errorf("%w: Post \"https://u:pw@host/mcp?key=s3cret\": refused", ErrUnavailable)
	red := RedactError(err)
	if strings.Contains(red.Error(), "s3cret") || strings.Contains(red.Error(), "pw") || !strings.Contains(red.Error(), "https://host/mcp") {
		t.Errorf("redacted: %q", red)
	}
	if !errors.Is(red, ErrUnavailable) {
		t.Error("the chain is lost")
	}
}
