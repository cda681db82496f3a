package redisstate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"fmt"

	"github.com/llmkit/toolkit"
)

// sealVersion is the first byte of a sealed record.
const sealVersion = 1

// sealer seals records with the first of its keys and opens them with the
// one whose id the record names.
type sealer struct {
	aeads []cipher.AEAD
	ids   [][4]byte
}

func newSealer(keys [][]byte) (*sealer, error) {
	s := &sealer{}
	for i, k := range keys {
		switch len(k) {
		case 16, 24, 32:
		default:
			return nil, fmt.Errorf("%w: redisstate: SealKeys[%d] has %d bytes: use 16, 24 or 32", toolkit.ErrBadParameter, i, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(append([]byte("toolkit redisstate key id\x00"), k...))
		s.aeads = append(s.aeads, aead)
		s.ids = append(s.ids, [4]byte(sum[:4]))
	}
	return s, nil
}

// seal returns plain sealed with the first key, bound to where (the
// record's key and field): version, key id, nonce, ciphertext.
func (s *sealer) seal(plain []byte, where string) []byte {
	aead := s.aeads[0]
	out := make([]byte, 0, 1+4+aead.NonceSize()+len(plain)+aead.Overhead())
	out = append(out, sealVersion)
	out = append(out, s.ids[0][:]...)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plain, []byte(where))
}

// open returns the plain text of sealed, which must have been sealed for
// where; its error wraps ErrUnsealed.
func (s *sealer) open(sealed []byte, where string) ([]byte, error) {
	if len(sealed) < 5 || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w (not a sealed record)", ErrUnsealed)
	}
	for i, id := range s.ids {
		if [4]byte(sealed[1:5]) != id {
			continue
		}
		aead := s.aeads[i]
		rest := sealed[5:]
		if len(rest) < aead.NonceSize() {
			break
		}
		plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], []byte(where))
		if err != nil {
			return nil, fmt.Errorf("%w (altered, or sealed for another key)", ErrUnsealed)
		}
		return plain, nil
	}
	return nil, fmt.Errorf("%w (sealed with a key no longer configured)", ErrUnsealed)
}
