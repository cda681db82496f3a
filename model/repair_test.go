package model

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

type repairCase struct {
	In      string   `json:"in"`
	Want    string   `json:"want"`
	Repairs []string `json:"repairs"`
	Error   bool     `json:"error"`
}

func loadRepairCases(t testing.TB) []repairCase {
	t.Helper()
	b, err := os.ReadFile("testdata/repair/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []repairCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestRepairCorpus(t *testing.T) {
	for _, c := range loadRepairCases(t) {
		got, notes, err := Repair(c.In)
		if c.Error {
			if !errors.Is(err, toolkit.ErrBadParameter) {
				t.Errorf("Repair(%q) = %q, %v; want ErrBadParameter", c.In, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Repair(%q): %v", c.In, err)
			continue
		}
		if got != c.Want {
			t.Errorf("Repair(%q) = %q, want %q", c.In, got, c.Want)
		}
		if len(notes) == 0 && len(c.Repairs) == 0 {
			continue
		}
		if !reflect.DeepEqual(notes, c.Repairs) {
			t.Errorf("Repair(%q) repairs = %q, want %q", c.In, notes, c.Repairs)
		}
	}
}

func TestRepairDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	if _, _, err := Repair(deep); err == nil {
		t.Error("100000 open brackets repaired")
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if got, _, err := Repair(ok[:199] + ",]"); err != nil || got != ok {
		t.Errorf("nested trailing comma: %q, %v", got, err)
	}
}

func FuzzRepair(f *testing.F) {
	for _, c := range loadRepairCases(f) {
		f.Add(c.In)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, notes, err := Repair(in)
		if err != nil {
			if out != "" || notes != nil {
				t.Fatalf("error with output %q %v", out, notes)
			}
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("Repair(%q) = %q: not valid JSON", in, out)
		}
		if json.Valid([]byte(in)) && (out != in || len(notes) > 0) {
			t.Fatalf("valid input %q changed to %q (%v)", in, out, notes)
		}
		if out != in && len(notes) == 0 {
			t.Fatalf("Repair(%q) = %q with no repair reported", in, out)
		}
		// Repairing the output changes nothing more.
		again, more, err := Repair(out)
		if err != nil || again != out || len(more) > 0 {
			t.Fatalf("second repair of %q: %q %v %v", out, again, more, err)
		}
	})
}
