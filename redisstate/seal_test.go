package redisstate

import (
	"bytes"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	s, err := newSealer([][]byte{key16})
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.seal([]byte("secret"), "k\x00f")
	if bytes.Contains(sealed, []byte("secret")) {
		t.Fatal("sealed text holds the plain text")
	}
	if plain, err := s.open(sealed, "k\x00f"); err != nil || string(plain) != "secret" {
		t.Fatalf("open: %q, %v", plain, err)
	}
	if _, err := s.open(sealed, "k\x00g"); !errors.Is(err, ErrUnsealed) {
		t.Errorf("opened for another place: %v", err)
	}
	if again := s.seal([]byte("secret"), "k\x00f"); bytes.Equal(again, sealed) {
		t.Error("two seals of one text are the same: the nonce is not random")
	}
}

// FuzzOpen: any bytes, as Redis may hold, fail to open cleanly or open
// to what was sealed; never a panic.
func FuzzOpen(f *testing.F) {
	s, err := newSealer([][]byte{key16, key32})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s.seal([]byte("x"), "w"), "w")
	f.Add([]byte{1, 0, 0, 0, 0}, "w")
	f.Add([]byte{}, "")
	f.Fuzz(func(t *testing.T, sealed []byte, where string) {
		if plain, err := s.open(sealed, where); err == nil && plain == nil {
			t.Error("opened to nil without an error")
		} else if err != nil && !errors.Is(err, ErrUnsealed) {
			t.Errorf("error %v does not wrap ErrUnsealed", err)
		}
	})
}
