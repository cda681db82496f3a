package errs

import (
	"cmp"
	"fmt"
)

// Option returns the error of an option given an invalid value: it wraps
// ErrBadParameter and names the option, as the module's constructors
// promise ("WithPageSize(0): want more than 0").
func Option(option string, value any, want string) error {
	return fmt.Errorf("%w: %s(%v): %s", ErrBadParameter, option, value, want)
}

// AtLeast checks that the value v given to option is at least min.
func AtLeast[T cmp.Ordered](option string, v, min T) error {
	if v < min {
		return Option(option, v, fmt.Sprintf("want %v or more", min))
	}
	return nil
}

// Above checks that the value v given to option is more than floor.
func Above[T cmp.Ordered](option string, v, floor T) error {
	if v <= floor {
		return Option(option, v, fmt.Sprintf("want more than %v", floor))
	}
	return nil
}

// Given checks that option was given a value (given: it is not nil); what
// names the value in the error ("OptDialer: nil dialer").
func Given(option string, given bool, what string) error {
	if !given {
		return fmt.Errorf("%w: %s: nil %s", ErrBadParameter, option, what)
	}
	return nil
}
