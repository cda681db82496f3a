package oauth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// fakeFlights is a fleet's FlightRegistry in memory; each process has its
// own view (process).
type fakeFlights struct {
	mu    sync.Mutex
	recs  map[string]fakeFlight
	down  error // every Begin fails with it
	begun int

	watches  bool                           // the processes are FlightWatchers
	watchers map[string]map[*int]func(bool) // by key
}

type fakeFlight struct{ owner, url string }

// fakeProcess is the registry of one process of the fleet.
type fakeProcess struct {
	f  *fakeFlights
	id string
}

func (p fakeProcess) Begin(_ context.Context, key, authURL string, _ time.Duration) (string, bool, error) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.f.begun++
	if p.f.down != nil {
		return "", false, p.f.down
	}
	if r, ok := p.f.recs[key]; ok && r.owner != p.id {
		return r.url, false, nil
	}
	p.f.recs[key] = fakeFlight{p.id, authURL}
	return authURL, true, nil
}

func (p fakeProcess) End(_ context.Context, key string) error {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if p.f.recs[key].owner == p.id {
		delete(p.f.recs, key)
		for _, wake := range p.f.watchers[key] {
			wake(true)
		}
	}
	return nil
}

// watchingProcess is a fakeProcess that is a FlightWatcher: the ends of
// flights wake their watchers.
type watchingProcess struct{ fakeProcess }

func (p watchingProcess) WatchFlight(key string, wake func(bool)) func() {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if p.f.watchers == nil {
		p.f.watchers = map[string]map[*int]func(bool){}
	}
	if p.f.watchers[key] == nil {
		p.f.watchers[key] = map[*int]func(bool){}
	}
	id := new(int)
	p.f.watchers[key][id] = wake
	wake(true)
	return func() {
		p.f.mu.Lock()
		defer p.f.mu.Unlock()
		delete(p.f.watchers[key], id)
	}
}

// watching returns how many watches of key are in place.
func (f *fakeFlights) watching(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers[key])
}

// replica returns a handler of lc's flow as another process of a fleet
// would make it: its own store (on lc's file) and so its own gate, the
// fleet's registry, and authorize.
func (lc *lifecycle) replica(t *testing.T, flights *fakeFlights, id string, authorize auth.AuthorizationCodeFetcher) *Handler {
	t.Helper()
	cfg := lc.cfg
	cfg.Store = NewFileTokenStore(lc.path)
	cfg.Flights = fakeProcess{flights, id}
	if flights.watches {
		cfg.Flights = watchingProcess{fakeProcess{flights, id}}
	}
	cfg.Authorize = authorize
	flow, err := AuthorizationCode(cfg)
	mustNotErr(t, err)
	allow, err := NewAllowList(lc.iss.URL)
	mustNotErr(t, err)
	h := NewHandler(context.Background(), flow, HandlerConfig{Resource: lc.rs.URL + "/mcp", Allow: allow, Principal: "jwt:alice", Logger: lc.logger()})
	h.clock = lc.clock
	t.Cleanup(h.Stop)
	return h
}

// shown is what a follower's Authorize was given.
type shown struct {
	url     string
	follows bool
}

// TestSharedFlightAsksOnce: two processes of a fleet need the same user's
// authorization at once. The second shows the user the first one's URL
// (Follows), not one of its own; once the first one's authorization
// stored the token, the second finds it at its next request and is
// authorized, without a second authorization; the record is gone.
func TestSharedFlightAsksOnce(t *testing.T) {
	lc, flights, b, _, errA, _ := followingPair(t)
	if _, err := b.Pending(); !errors.Is(err, ErrAuthorizationPending) {
		t.Errorf("B's Pending while the user is asked: %v", err)
	}

	close(lc.b.gate) // the user authorizes, at A's URL
	mustNotErr(t, receive(t, errA))
	if _, err := b.Pending(); err != nil || !b.Authorized() {
		t.Fatalf("B after A stored the token: %v, authorized %v; want authorized", err, b.Authorized())
	}
	mustNotErr(t, lc.call(t, b))
	if n := lc.b.urls.Load(); n != 1 {
		t.Errorf("the user was asked %d times, want once", n)
	}
	if n := lc.iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want one for the fleet", n)
	}
	b.Stop()
	flights.mu.Lock()
	defer flights.mu.Unlock()
	if len(flights.recs) != 0 {
		t.Errorf("records left: %v", flights.recs)
	}
	lc.noSecrets(t)
}

// TestSharedFlightOwnerFails: when the authorization a process follows
// ends without a token, the follower asks the user at its own URL, and
// records it for the fleet.
func TestSharedFlightOwnerFails(t *testing.T) {
	lc, flights, b, toB, errA, urlA := followingPair(t)
	declined := errors.New("declined")
	lc.b.fail.Store(&declined)
	close(lc.b.gate)
	if err := receive(t, errA); err == nil {
		t.Fatal("A's authorization succeeded, want it declined")
	}
	lc.clock.Advance(followPoll)
	if got := receive(t, toB); got.url == urlA || got.follows || !strings.Contains(got.url, "state=") {
		t.Fatalf("B after A's authorization failed shows %+v; want its own URL", got)
	}
	flights.mu.Lock()
	owner := flights.recs[b.sharedKey()].owner
	flights.mu.Unlock()
	if owner != "B" {
		t.Errorf("the record is %q's, want B's", owner)
	}
	b.Stop()
	flights.mu.Lock()
	defer flights.mu.Unlock()
	if len(flights.recs) != 0 {
		t.Errorf("records left after B stopped: %v", flights.recs)
	}
}

// followingPair starts replicas A and B sharing flights; A asks the user
// (held until lc.b.gate closes) and B, needing the same authorization,
// shows the user A's URL. It returns what B shows next, A's call's
// outcome and A's URL.
func followingPair(t *testing.T) (lc *lifecycle, flights *fakeFlights, b *Handler, toB chan shown, errA chan error, urlA string) {
	return followingPairOf(t, &fakeFlights{recs: map[string]fakeFlight{}}, nil)
}

// followingPairOf is followingPair on flights; ended, when not nil, is
// given the cause of the end of each of B's Authorize calls.
func followingPairOf(t *testing.T, flights *fakeFlights, ended chan<- error) (lc *lifecycle, _ *fakeFlights, b *Handler, toB chan shown, errA chan error, urlA string) {
	t.Helper()
	leakCheck(t)
	lc = newLifecycle(t)
	lc.b.gate = make(chan struct{})
	lc.b.in = make(chan string, 4)
	a := lc.replica(t, flights, "A", lc.b.authorize)
	toB = make(chan shown, 4)
	b = lc.replica(t, flights, "B", func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		toB <- shown{args.URL, Follows(ctx)}
		<-ctx.Done()
		if ended != nil {
			ended <- context.Cause(ctx)
		}
		return nil, ctx.Err()
	})
	errA = make(chan error, 1)
	go func() { errA <- lc.call(t, a) }()
	urlA = receive(t, lc.b.in)
	ctx, cancel := context.WithTimeout(NoWait(context.Background()), waitLimit)
	defer cancel()
	if _, err := lc.connect(ctx, b); !errors.Is(err, ErrAuthorizationPending) {
		t.Fatalf("B while A asks the user: %v, want ErrAuthorizationPending", err)
	}
	if got := receive(t, toB); got.url != urlA || !got.follows {
		t.Fatalf("B shows %+v; want A's URL %s, following", got, urlA)
	}
	return lc, flights, b, toB, errA, urlA
}

// TestSharedFlightWakes: a process that follows another's authorization
// through a FlightWatcher is woken by that authorization's end: it takes
// the token at once, with no look of its own (its clock never moves, so
// the periodic look never comes), and its watch ends with its flight.
func TestSharedFlightWakes(t *testing.T) {
	ended := make(chan error, 1)
	lc, flights, b, _, errA, _ := followingPairOf(t, &fakeFlights{recs: map[string]fakeFlight{}, watches: true}, ended)
	key := b.sharedKey()
	if n := flights.watching(key); n != 1 {
		t.Fatalf("%d watches of the followed authorization, want 1", n)
	}
	close(lc.b.gate) // the user authorizes, at A's URL
	mustNotErr(t, receive(t, errA))
	if cause := receive(t, ended); !errors.Is(cause, errFollowed) {
		t.Fatalf("B's following ended with %v, want the token of A's authorization", cause)
	}
	if !b.Authorized() {
		t.Fatal("B is not authorized once its following ended")
	}
	mustNotErr(t, lc.call(t, b))
	if n := lc.iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want one for the fleet", n)
	}
	b.Stop()
	if n := flights.watching(key); n != 0 {
		t.Errorf("%d watches left after the flight", n)
	}
}

// TestSameAuthorization: a process follows only a URL of the same
// authorization endpoint, client and redirect URI as its own, with one
// state: a forged record never sends the user elsewhere.
func TestSameAuthorization(t *testing.T) {
	const own = "https://as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s1"
	for _, tt := range []struct {
		other string
		want  bool
	}{
		{"https://as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2&code_challenge=x", true},
		{"https://evil.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"http://as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"https://as.example/other?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"https://as.example/authorize?client_id=d&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"https://as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fevil%2Fcb&response_type=code&state=s2", false},
		{"https://as.example/authorize?client_id=c&client_id=d&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"https://as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code", false},
		{"https://user@as.example/authorize?client_id=c&redirect_uri=https%3A%2F%2Fgw%2Fcb&response_type=code&state=s2", false},
		{"%zz", false},
	} {
		if got := SameAuthorization(own, tt.other); got != tt.want {
			t.Errorf("SameAuthorization(own, %q) = %v, want %v", tt.other, got, tt.want)
		}
	}
}

// TestSharedFlightUnavailable: when the registry fails, each process
// runs its own authorization, and says so once.
func TestSharedFlightUnavailable(t *testing.T) {
	leakCheck(t)
	sharedDown.Store(false)
	lc := newLifecycle(t)
	flights := &fakeFlights{recs: map[string]fakeFlight{}, down: errors.New("registry down")}
	a := lc.replica(t, flights, "A", lc.b.authorize)
	b := lc.replica(t, flights, "B", lc.b.authorize)
	mustNotErr(t, lc.call(t, a))
	lc.iss.Revoke()
	mustNotErr(t, lc.call(t, b))
	if n := lc.b.urls.Load(); n != 2 {
		t.Errorf("%d URLs, want each process's own", n)
	}
	if n := strings.Count(lc.logs.String(), "shared by this process alone"); n != 1 {
		t.Errorf("the registry's failure logged %d times, want once:\n%s", n, lc.logs.String())
	}
}

// receive returns the next value of ch, or fails the test after
// waitLimit.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("nothing came")
		panic("unreachable")
	}
}
