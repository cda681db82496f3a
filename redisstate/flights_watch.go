package redisstate

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/redis/go-redis/v9"
)

// The ends of flights are announced on a channel (endFlight publishes
// the flight's key there), so that the replicas following a flight take
// its token as soon as it is stored. A store subscribes while one of its
// registries' followers watches, with one subscription for all of them.

var _ oauth.FlightWatcher = (*FlightRegistry)(nil)

const (
	// watchHealth is how long the subscription may hear nothing before it
	// is pinged, and then before it is held lost.
	watchHealth = 5 * time.Second
	// watchRetry is how long a lost subscription waits between attempts.
	watchRetry = time.Second
)

// flightWatchers is what a store's watches of flights share: the
// followers by key, and the subscription while there are some.
type flightWatchers struct {
	mu   sync.Mutex
	by   map[string]map[*func(bool)]struct{} // by the flight's Redis key
	sub  *endsSubscription                   // nil while nobody watches
	live bool                                // sub hears the announcements
}

// endsSubscription is one subscription to the announcements of ends.
type endsSubscription struct {
	cancel context.CancelFunc
	ps     *redis.PubSub
	done   chan struct{}
}

// endsChannel is where the ends of flights are announced.
func (s *Store) endsChannel() string { return s.prefix + "flight-ends" }

// WatchFlight implements [oauth.FlightWatcher]: the end of the flight is
// the announcement its owner's End makes; the subscription (re)made is a
// wake too, since an end may have gone unheard meanwhile; a subscription
// that fails, or does not answer a ping, is lost.
func (fr *FlightRegistry) WatchFlight(key string, wake func(live bool)) (stop func()) {
	return fr.s.watchFlight(fr.s.key("flight", key), wake)
}

// watchFlight calls wake as [FlightRegistry.WatchFlight] says, for the
// flight at Redis key k.
func (s *Store) watchFlight(k string, wake func(live bool)) (stop func()) {
	w := &wake
	ws := &s.flights
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.by == nil {
		ws.by = map[string]map[*func(bool)]struct{}{}
	}
	if ws.by[k] == nil {
		ws.by[k] = map[*func(bool)]struct{}{}
	}
	ws.by[k][w] = struct{}{}
	if ws.sub == nil {
		ws.sub = s.subscribeEnds()
	} else if ws.live {
		wake(true)
	}
	return func() {
		ws.mu.Lock()
		delete(ws.by[k], w)
		if len(ws.by[k]) == 0 {
			delete(ws.by, k)
		}
		var last *endsSubscription
		if len(ws.by) == 0 {
			last, ws.sub, ws.live = ws.sub, nil, false
		}
		ws.mu.Unlock()
		if last != nil {
			last.cancel()
			last.ps.Close()
			<-last.done
		}
	}
}

// subscribeEnds starts the subscription to the ends of flights;
// s.flights.mu is held.
func (s *Store) subscribeEnds() *endsSubscription {
	ctx, cancel := context.WithCancel(context.Background())
	es := &endsSubscription{cancel: cancel, done: make(chan struct{})}
	// Subscribe's error shows in the first Receive, which connects again.
	es.ps = s.rdb.Subscribe(ctx, s.endsChannel())
	go s.listenEnds(ctx, es)
	return es
}

// listenEnds wakes the watchers of the flights whose ends es hears, and
// all of them when es is (again) in place or lost, until ctx ends.
func (s *Store) listenEnds(ctx context.Context, es *endsSubscription) {
	defer close(es.done)
	pinged := false
	for ctx.Err() == nil {
		msg, err := es.ps.ReceiveTimeout(ctx, watchHealth)
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.wakeFlights(es, true, "", true)
			}
		case *redis.Pong:
			pinged = false
			s.wakeFlights(es, true, "", false)
		case *redis.Message:
			s.wakeFlights(es, true, m.Payload, false)
		}
		if err == nil || ctx.Err() != nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !pinged {
			pinged = true
			if es.ps.Ping(ctx) == nil {
				continue
			}
		}
		// Lost: the client connects again at the next Receive.
		pinged = false
		s.wakeFlights(es, false, "", false)
		t := time.NewTimer(watchRetry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// wakeFlights tells the watchers of es that it is live, or lost, when that
// changed or always is set (a subscription made again: an end may have
// gone unheard), and (live) those of the flight at ended, which ended.
func (s *Store) wakeFlights(es *endsSubscription, live bool, ended string, always bool) {
	ws := &s.flights
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.sub != es {
		return
	}
	if ws.live != live || always {
		ws.live = live
		ended = "" // everyone is told
	} else if ended == "" {
		return
	}
	for k, set := range ws.by {
		if ended == "" || k == ended {
			for w := range set {
				(*w)(live)
			}
		}
	}
}
