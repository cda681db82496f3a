package mcp

import (
	"errors"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// unwired returns err, which a connection attempt failed with, without
// the JSON-RPC errors in its chain: those are the transport's own (the
// go-sdk wraps a request it could not send, or whose authorization
// failed, in a "rejected by transport" error with a code), not an answer
// of the server to a call, and a server face passes an error that carries
// a JSON-RPC error on to its client as the call's answer, losing the
// cause. The error says what err says, and matches (errors.Is, errors.As)
// everything else err's chain holds.
func unwired(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return err
	}
	return &unwiredError{err}
}

// unwiredError is an error in the chain of unwired: it stands for err
// and unwraps to err's children, but those that are JSON-RPC errors.
type unwiredError struct{ err error }

func (e *unwiredError) Error() string { return e.err.Error() }

// Is reports whether e stands for target.
func (e *unwiredError) Is(target error) bool {
	if reflect.TypeOf(e.err).Comparable() && e.err == target {
		return true
	}
	if x, ok := e.err.(interface{ Is(error) bool }); ok {
		return x.Is(target)
	}
	return false
}

// As sets target to the error e stands for when it is of its type.
func (e *unwiredError) As(target any) bool {
	if _, wire := e.err.(*jsonrpc.Error); wire {
		return false
	}
	if x, ok := e.err.(interface{ As(any) bool }); ok && x.As(target) {
		return true
	}
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	if t := v.Elem().Type(); reflect.TypeOf(e.err).AssignableTo(t) {
		v.Elem().Set(reflect.ValueOf(e.err))
		return true
	}
	return false
}

// Unwrap returns err's children, each standing for itself, but the
// JSON-RPC errors.
func (e *unwiredError) Unwrap() []error {
	var children []error
	switch x := e.err.(type) {
	case interface{ Unwrap() error }:
		if c := x.Unwrap(); c != nil {
			children = []error{c}
		}
	case interface{ Unwrap() []error }:
		children = x.Unwrap()
	}
	out := make([]error, 0, len(children))
	for _, c := range children {
		if _, wire := c.(*jsonrpc.Error); wire || c == nil {
			continue
		}
		out = append(out, &unwiredError{c})
	}
	return out
}
