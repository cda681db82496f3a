package schemaguard

import (
	"errors"
	"fmt"
	"testing"
)

// A Memo runs a check once per text, whether given as bytes or a string,
// keeps failures as well as successes, and holds a bounded number of
// verdicts.
func TestMemo(t *testing.T) {
	var m Memo
	runs := map[string]int{}
	bad := errors.New("bad")
	check := func(text string) func() error {
		return func() error {
			runs[text]++
			if text == "bad" {
				return bad
			}
			return nil
		}
	}
	for range 3 {
		if err := m.Check([]byte("good"), check("good")); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckString("good", check("good")); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckString("bad", check("bad")); !errors.Is(err, bad) {
			t.Fatalf("bad: %v", err)
		}
	}
	if runs["good"] != 1 || runs["bad"] != 1 {
		t.Errorf("checks run: %v, want once each", runs)
	}
	for i := range 3 * memoSize {
		m.CheckString(fmt.Sprint(i), func() error { return nil })
	}
	if n := len(m.verdict); n > memoSize {
		t.Errorf("%d verdicts held, want at most %d", n, memoSize)
	}
}
