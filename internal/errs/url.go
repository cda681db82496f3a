package errs

import (
	"errors"
	"fmt"
	"net/url"
)

// WithoutURL returns the error of [net/url.Parse] without the URL it
// quotes, which may carry secrets (a password, a token in the query):
// "parse: invalid URL escape "%zz"". Any other error is returned as it is.
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
