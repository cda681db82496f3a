package schemaguard

import (
	"hash/maphash"
	"sync"
)

// memoSize bounds the verdicts a Memo holds.
const memoSize = 4096

// A Memo remembers the verdicts of a check of schema texts, by a seeded
// hash of the text, so that a text seen again is not decoded and checked
// again: the tools of a server, and of many servers, often share one
// schema. It holds at most 4,096 verdicts and starts afresh when full.
// The hash is seeded at random per Memo, so a peer cannot choose a text
// that collides with one already checked. The zero value is ready; a Memo
// is safe for concurrent use.
type Memo struct {
	mu      sync.Mutex
	seed    maphash.Seed
	seeded  bool
	verdict map[uint64]error
}

// Check returns check's verdict on text, from memory when the same text
// was checked before. check runs outside the Memo's lock.
func (m *Memo) Check(text []byte, check func() error) error {
	return m.do(func(seed maphash.Seed) uint64 { return maphash.Bytes(seed, text) }, check)
}

// CheckString is Check for a text held as a string.
func (m *Memo) CheckString(text string, check func() error) error {
	return m.do(func(seed maphash.Seed) uint64 { return maphash.String(seed, text) }, check)
}

func (m *Memo) do(hash func(maphash.Seed) uint64, check func() error) error {
	m.mu.Lock()
	if !m.seeded {
		m.seed, m.seeded = maphash.MakeSeed(), true
	}
	h := hash(m.seed)
	err, ok := m.verdict[h]
	m.mu.Unlock()
	if ok {
		return err
	}
	err = check()
	m.mu.Lock()
	if m.verdict == nil || len(m.verdict) >= memoSize {
		m.verdict = make(map[uint64]error)
	}
	m.verdict[h] = err
	m.mu.Unlock()
	return err
}
