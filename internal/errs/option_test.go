package errs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestOptionChecks(t *testing.T) {
	if err := AtLeast("OptX", 0, 0); err != nil {
		t.Errorf("AtLeast(0, 0) = %v", err)
	}
	err := AtLeast("OptCallTimeout", -time.Second, 0)
	if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "OptCallTimeout(-1s): want 0s or more") {
		t.Errorf("AtLeast(-1s) = %v", err)
	}
	if err := Above("OptY", 1, 0); err != nil {
		t.Errorf("Above(1, 0) = %v", err)
	}
	err = Above("WithPageSize", 0, 0)
	if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "WithPageSize(0): want more than 0") {
		t.Errorf("Above(0, 0) = %v", err)
	}
}
