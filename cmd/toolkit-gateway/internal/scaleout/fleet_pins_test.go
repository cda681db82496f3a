package scaleout

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestFleetPins: a changed upstream definition seen by one replica is
// quarantined on all three — a call through haproxy, whichever replica
// takes it, is refused and the upstream runs it no time — and
// `toolkit-gateway pins approve --config`, run against Redis, releases it
// on all three once their upstreams all serve it.
//
// Each replica has an upstream of its own, so that only replica r0 sees
// the change at first: r1 and r2 refuse the tool their upstreams still
// serve unchanged because the quarantine reached them through Redis.
func TestFleetPins(t *testing.T) {
	f := startFleet(t, fleetOptions{})
	ctx := t.Context()
	hc := newHTTPClient(t)

	lists := f.watchLists(t, hc)
	lists.until(t, true)
	// One client of the newest protocol, without a session: haproxy
	// sends each of its calls to the next replica.
	cs, err := connect(ctx, hc, f.url, protocolNew)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if out, err := f.pins(t, "list", "--all"); err != nil || !strings.Contains(out, "dict.lookup") {
		t.Fatalf("pins list: %v\n%s", err, out)
	}

	f.ups[0].setLookup(changedDescription)
	lists.until(t, false)
	refusedOn := map[string]bool{}
	for try := 0; len(refusedOn) < len(f.replicas) && try < 3*len(f.replicas); try++ {
		name, err := f.callVia(ctx, func() error { return lookup(ctx, cs, "w") })
		if err == nil || hang(err) {
			t.Fatalf("a call of the quarantined tool on %s: %v", name, err)
		}
		refusedOn[name] = true
	}
	if len(refusedOn) != len(f.replicas) {
		t.Errorf("refused on %v only", refusedOn)
	}
	if n := f.executed.Load(); n != 0 {
		t.Errorf("the upstream ran the quarantined tool %d times", n)
	}
	out, err := f.pins(t, "list")
	if err != nil || !strings.Contains(out, "dict.lookup\tquarantined") {
		t.Fatalf("pins list against Redis: %v\n%s", err, out)
	}

	// The change reaches the other upstreams; each replica has listed
	// it when it tells its client its list changed.
	for i, u := range f.ups[1:] {
		lists.next(t, i+1, func() { u.setLookup(changedDescription) })
	}
	f.approve(t, lists)
	answeredOn := map[string]bool{}
	for range len(f.replicas) {
		name, err := f.callVia(ctx, func() error { return lookup(ctx, cs, "w") })
		if err != nil {
			t.Errorf("a call of the approved tool on %s: %v", name, err)
		}
		answeredOn[name] = true
	}
	if len(answeredOn) != len(f.replicas) || f.executed.Load() != int64(len(f.replicas)) {
		t.Errorf("approved: answered on %v, %d executed upstream", answeredOn, f.executed.Load())
	}
	f.checkAlive(t)
}

// callVia makes one request through haproxy with call, and returns the
// name of the replica that served it (from haproxy's statistics) and
// call's error. No other request may pass through haproxy meanwhile.
func (f *fleet) callVia(ctx context.Context, call func() error) (string, error) {
	before, err := f.h.stats(ctx)
	if err != nil {
		return "", err
	}
	callErr := call()
	after, err := f.h.stats(ctx)
	if err != nil {
		return "", err
	}
	var served []string
	for _, r := range f.replicas {
		if counter(after[r.name], "stot") > counter(before[r.name], "stot") {
			served = append(served, r.name)
		}
	}
	if len(served) != 1 {
		return fmt.Sprint(served), fmt.Errorf("served by %v, want one replica: %v", served, callErr)
	}
	return served[0], callErr
}
