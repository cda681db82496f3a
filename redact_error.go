package toolkit

// RedactError returns err with the secrets of the URLs in its message
// removed (see [RedactURL]), or err itself when its message holds none.
// [errors.Is] and [errors.As] still see err and its chain. Connectors use it
// for errors that quote a request URL (net/http does).
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := redactText(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
