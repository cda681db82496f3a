package mcpserver

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds of the requestStates the server issues and takes back.
const (
	// maxInputStateLen is the longest requestState opened; a longer one is
	// refused before any decoding.
	maxInputStateLen = 32 << 10
	// maxRedeemed is the most requestStates remembered as answered until
	// their expiry (stateKeys.redeem); while that many are, a retry with
	// another one is refused (and may be made again once some expired).
	maxRedeemed = 1 << 16
)

// inputStateVersion starts the plaintext of every requestState, so that a
// later layout is told apart.
const inputStateVersion = 1

// inputStateAAD binds a sealed requestState to its use: the same key
// sealing something else for another purpose never opens as one.
var inputStateAAD = []byte("toolkit/mcpserver/requestState/v1")

// Refusals of a retry's requestState. Each is a JSON-RPC invalid-params
// error (-32602) whose message names the requestState.
var (
	errStateForged    = stateError("requestState was not issued by this server (forged, altered, or sealed with a key it does not have)")
	errStateExpired   = stateError("requestState has expired")
	errStateOther     = stateError("requestState belongs to another principal, tool or arguments")
	errStateAnswered  = stateError("requestState was answered already")
	errStateBusy      = stateError("requestState cannot be checked now: too many answered states remembered; retry later")
	errStateUnchecked = stateError("requestState cannot be checked now: the answered states shared by the replicas cannot be reached; retry later")
	errStateNoCall    = stateError("requestState names no call waiting for input on this server (it ended, or runs on another replica)")
)

// isStateError reports whether we is one of the refusals of a
// requestState.
func isStateError(we *jsonrpc.Error) bool {
	switch we {
	case errStateForged, errStateExpired, errStateOther, errStateAnswered, errStateBusy, errStateNoCall:
		return true
	}
	return false
}

func stateError(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// inputState is what a requestState holds: which call waits for which
// round, until when, and the request it may resume — its principal,
// tool and arguments (a hash), so that a retry cannot be moved to another
// client, tool or call.
type inputState struct {
	call      [16]byte // names the waiting call
	round     uint32
	expires   time.Time // to the millisecond
	principal string
	tool      string
	request   [32]byte // requestHash of the tool and arguments
	// target is the method and toolkit item (roundRequest.target).
	target string
	// passed marks the state of an upstream server's round passed on to
	// the client (inputRounds.passed): upstream is the server's own
	// requestState; nothing waits.
	passed   bool
	upstream string
}

// used is the key of s among the answered states.
func (s *inputState) used() stateUse { return stateUse{s.call, s.round} }

// stateUse names one requestState (a call's round) among the answered
// ones.
type stateUse struct {
	call  [16]byte
	round uint32
}

// stateKeys seals and opens requestStates with AES-GCM: the first key
// seals, every key opens (a key being rotated out keeps opening what it
// sealed until those expire). It remembers the states answered until
// their expiry, so that none is answered twice on this server.
type stateKeys struct {
	aeads []cipher.AEAD

	mu       sync.Mutex
	redeemed map[stateUse]time.Time // until when each is remembered
	max      int

	shared ReplaySet // the fleet's answered states; nil without one
}

// newStateKeys returns the sealer of keys (16, 24 or 32 bytes each, AES-128,
// -192 or -256); no key gives a random 256-bit one, good for this process
// only.
func newStateKeys(keys [][]byte) (*stateKeys, error) {
	if len(keys) == 0 {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		keys = [][]byte{k}
	}
	sk := &stateKeys{redeemed: map[stateUse]time.Time{}, max: maxRedeemed}
	for i, k := range keys {
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("key %d: %d bytes, want 16, 24 or 32", i, len(k))
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %d: %v", i, err)
		}
		sk.aeads = append(sk.aeads, aead)
	}
	return sk, nil
}

// seal returns s as a requestState: base64url of a random nonce and the
// AES-GCM sealed plaintext.
func (k *stateKeys) seal(s *inputState) string {
	aead := k.aeads[0]
	plain := make([]byte, 0, 2+16+4+8+32+4*binary.MaxVarintLen64+len(s.principal)+len(s.tool)+len(s.target)+len(s.upstream))
	plain = append(plain, inputStateVersion)
	flags := byte(0)
	if s.passed {
		flags = 1
	}
	plain = append(plain, flags)
	plain = append(plain, s.call[:]...)
	plain = binary.BigEndian.AppendUint32(plain, s.round)
	plain = binary.BigEndian.AppendUint64(plain, uint64(s.expires.UnixMilli()))
	plain = append(plain, s.request[:]...)
	plain = binary.AppendUvarint(plain, uint64(len(s.principal)))
	plain = append(plain, s.principal...)
	for _, f := range []string{s.tool, s.target, s.upstream} {
		plain = binary.AppendUvarint(plain, uint64(len(f)))
		plain = append(plain, f...)
	}
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	_, _ = rand.Read(out)
	out = aead.Seal(out, out, plain, inputStateAAD)
	return base64.RawURLEncoding.EncodeToString(out)
}

// open returns the state a requestState holds, or errStateForged for
// anything no key of k sealed. It checks nothing else.
func (k *stateKeys) open(text string) (*inputState, error) {
	if len(text) > maxInputStateLen {
		return nil, errStateForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return nil, errStateForged
	}
	for _, aead := range k.aeads {
		n := aead.NonceSize()
		if len(raw) < n+aead.Overhead() {
			continue
		}
		plain, err := aead.Open(nil, raw[:n], raw[n:], inputStateAAD)
		if err != nil {
			continue
		}
		return parseInputState(plain)
	}
	return nil, errStateForged
}

// parseInputState decodes the plaintext of a requestState (seal's
// layout). Only plaintexts a key of ours sealed reach it, but it takes
// nothing for granted: a wrong version, length or trailing byte is
// refused.
func parseInputState(p []byte) (*inputState, error) {
	const fixed = 2 + 16 + 4 + 8 + 32
	if len(p) < fixed || p[0] != inputStateVersion || p[1] > 1 {
		return nil, errStateForged
	}
	s := &inputState{passed: p[1] == 1}
	p = p[1:]
	copy(s.call[:], p[1:17])
	s.round = binary.BigEndian.Uint32(p[17:21])
	s.expires = time.UnixMilli(int64(binary.BigEndian.Uint64(p[21:29])))
	copy(s.request[:], p[29:61])
	rest := p[fixed-1:]
	for _, f := range []*string{&s.principal, &s.tool, &s.target, &s.upstream} {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return nil, errStateForged
		}
		*f = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	if len(rest) != 0 || (!s.passed && s.upstream != "") {
		return nil, errStateForged
	}
	return s, nil
}

// check refuses s when it has expired by now or was issued for another
// principal, tool or request than the retry's.
func (s *inputState) check(now time.Time, principal, tool string, request [32]byte) error {
	if !now.Before(s.expires) {
		return errStateExpired
	}
	if s.principal != principal || s.tool != tool || s.request != request {
		return errStateOther
	}
	return nil
}

// redeem records s as answered until its expiry, or refuses it when it was
// answered already (errStateAnswered) or when maxRedeemed unexpired
// states are remembered (errStateBusy: refusing is safe, forgetting one
// would let it be answered again).
func (k *stateKeys) redeem(now time.Time, s *inputState) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	u := s.used()
	if _, ok := k.redeemed[u]; ok {
		return errStateAnswered
	}
	if len(k.redeemed) >= k.max {
		for id, until := range k.redeemed {
			if !now.Before(until) {
				delete(k.redeemed, id)
			}
		}
		if len(k.redeemed) >= k.max {
			return errStateBusy
		}
	}
	k.redeemed[u] = s.expires
	return nil
}

// redeemEverywhere redeems s here (redeem) and in the shared set, if
// there is one: a state answered on another replica is refused as
// answered, and one that cannot be checked as busy.
func (k *stateKeys) redeemEverywhere(ctx context.Context, now time.Time, s *inputState) error {
	if err := k.redeem(now, s); err != nil || k.shared == nil {
		return err
	}
	u := s.used()
	first, err := k.shared.Redeem(ctx, hex.EncodeToString(u.call[:])+"-"+strconv.FormatUint(uint64(u.round), 10), s.expires)
	switch {
	case err != nil:
		return errStateUnchecked
	case !first:
		return errStateAnswered
	}
	return nil
}

// answered reports whether s was redeemed.
func (k *stateKeys) answered(s *inputState) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.redeemed[s.used()]
	return ok
}

// requestHash is the hash a requestState binds the retry's request to:
// the tool's name and its arguments in a canonical form (keys sorted, no
// spaces), so that a client that encodes the same arguments again, in
// another order, still matches, and one that changes them does not.
// Arguments that are not JSON are hashed as they are.
func requestHash(tool string, args json.RawMessage) [32]byte {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonicalJSON(args))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// canonicalJSON returns args decoded and encoded again (object keys
// sorted, numbers kept as written), or args unchanged when they do not
// decode. "null" and nothing are the empty object, as for the call.
func canonicalJSON(args json.RawMessage) []byte {
	args = callArguments(args)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return args
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return out
}
