package toolkit

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Bounds of event delivery.
const (
	// maxQueuedEvents caps the undelivered events of one subscriber, after
	// coalescing. Past it the oldest are dropped.
	maxQueuedEvents = 4096
	// dropWarnInterval is how often, at most, a subscriber that keeps
	// losing events is warned about while its queue stays full; the end of
	// each burst of drops is reported too.
	dropWarnInterval = 10 * time.Second
	// eventDrainTimeout bounds how long Run waits, after its context is
	// cancelled and the connectors have stopped, for subscribers to receive
	// their pending events.
	eventDrainTimeout = 5 * time.Second
)

// Subscribe registers fn to receive the toolkit's events and returns a
// function that cancels the subscription. Any number of subscribers may be
// registered; each receives:
//
//   - ConnectorEventToolListChanged, ConnectorEventPromptListChanged and
//     ConnectorEventResourceListChanged when a list really changed (a
//     connector's refreshed list differs, a connector was removed, a
//     builtin was added or removed), with Namespace set ("builtin" for
//     builtins) and Connector set for connector events;
//   - ConnectorEventResourceUpdated when a resource's content changed, with
//     URI set;
//   - ConnectorEventSkillListChanged when the skills of a source changed
//     (a builtin skill added or removed, a connector's skills), with
//     Namespace set;
//   - ConnectorEventStateChange when a connector's state changed, with
//     State (its URL and Namespace set) as Connectors reports it. A
//     connector is announced ready only once its items are in List and
//     Lookup.
//
// The items an event is about are published before the event is queued, so
// fn sees the change in List and Lookup. Events are delivered in the order
// of the changes, one at a time, on a goroutine of the subscriber's own
// that holds no toolkit lock and exists only while events are pending: fn
// may call back into the toolkit, even RemoveConnector or cancel. A slow fn
// delays only its own deliveries, never the toolkit or other subscribers.
// A panic in fn is recovered and logged.
//
// Events are notifications: receivers read the current state (List,
// Lookup, Connectors) when they get one. A receiver that must know of a
// change before the method that made it returns (a cache that reads its
// own writes) uses Notify instead. So an event that is still waiting
// for fn absorbs later ones of its sort: a list change of the same
// namespace and kind, a resource update of the same namespace and URI, and
// a state change of the same namespace (which carries the newer state)
// replace it in its place in the queue. A subscriber that falls behind
// further still has its oldest events dropped past 4096 waiting ones, with
// a warning in the log that counts them.
//
// Subscribe first and read the current state second: every change made
// after Subscribe returns is announced to fn (short of the drops above). cancel may be called any number
// of times, from any goroutine, fn included. Once it returns, no new call
// of fn starts; a call already under way is not waited for (so that fn can
// cancel itself) and may still be running. The delegate's OnEvent is one
// subscriber of this kind that does not receive state changes. A nil fn
// receives nothing.
func (tk *Toolkit) Subscribe(fn func(ConnectorEvent)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	s := tk.feed.add("subscriber", fn, true)
	var once sync.Once
	return func() { once.Do(func() { tk.feed.remove(s) }) }
}

// WaitEvents blocks until every event queued so far has been delivered to
// every subscriber (the delegate included). Tests and shutdown code use
// it. It must not be called from a subscriber's function, which would wait
// for itself.
func (tk *Toolkit) WaitEvents() { tk.feed.wait(0) }

// queue hands events to the subscribers. It is called with tk.mu held, so
// events are queued in the order of the changes they describe. Nothing is
// delivered while New is still applying options.
func (tk *Toolkit) queue(events ...ConnectorEvent) {
	if tk.building {
		return
	}
	tk.feed.push(events)
}

// eventKey identifies the events that coalesce in a subscriber's queue.
type eventKey struct {
	kind ConnectorEventKind
	ns   string
	uri  string
}

func keyOf(ev ConnectorEvent) eventKey {
	k := eventKey{kind: ev.Kind, ns: ev.Namespace}
	if ev.Kind == ConnectorEventResourceUpdated {
		k.uri = ev.URI
	}
	return k
}

// feed delivers the toolkit's events to its subscribers. One mutex guards
// the subscribers and their queues; fn is always called without it.
type feed struct {
	logger *slog.Logger

	mu     sync.Mutex
	subs   []*subscriber
	notes  []*notifier   // see Toolkit.Notify
	active int           // delivery goroutines running
	idle   chan struct{} // closed when active drops to zero
}

// subscriber is one receiver of events and its queue.
type subscriber struct {
	name   string // for log lines
	fn     func(ConnectorEvent)
	states bool // receives ConnectorEventStateChange
	max    int  // queue bound

	// Guarded by feed.mu.
	queue   []ConnectorEvent
	first   uint64              // sequence number of queue[0]
	index   map[eventKey]uint64 // key of every queued event -> its sequence number
	running bool                // a delivery goroutine exists
	done    bool                // cancelled
	dropped int                 // events dropped and not yet reported
	dropAt  time.Time           // start of the burst or time of the last report
}

func (f *feed) add(name string, fn func(ConnectorEvent), states bool) *subscriber {
	s := &subscriber{name: name, fn: fn, states: states, max: maxQueuedEvents}
	f.mu.Lock()
	f.subs = append(f.subs, s)
	f.mu.Unlock()
	return s
}

func (f *feed) remove(s *subscriber) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.done = true
	s.queue, s.index, s.dropped = nil, nil, 0
	f.subs = slices.DeleteFunc(f.subs, func(o *subscriber) bool { return o == s })
}

// push queues events for every subscriber and starts the delivery
// goroutines that are missing.
func (f *feed) push(events []ConnectorEvent) {
	if len(events) == 0 {
		return
	}
	type report struct {
		s *subscriber
		n int
	}
	var reports []report
	f.mu.Lock()
	for _, n := range f.notes {
		n.signal(events)
	}
	for _, s := range f.subs {
		for _, ev := range events {
			s.add(ev)
		}
		if n := s.takeDrops(false); n > 0 {
			reports = append(reports, report{s, n})
		}
		if len(s.queue) > 0 && !s.running {
			s.running = true
			if f.active == 0 {
				f.idle = make(chan struct{})
			}
			f.active++
			go f.drain(s)
		}
	}
	f.mu.Unlock()
	for _, r := range reports {
		f.warnDrops(r.s, r.n)
	}
}

// add queues ev, coalescing it with an undelivered event of the same key
// and dropping the oldest event when the queue is full. feed.mu is held.
func (s *subscriber) add(ev ConnectorEvent) {
	if (ev.Kind == ConnectorEventStateChange || ev.Kind == ConnectorEventPolicyChanged) && !s.states {
		return
	}
	key := keyOf(ev)
	if seq, ok := s.index[key]; ok {
		s.queue[seq-s.first] = ev
		return
	}
	if len(s.queue) >= s.max {
		s.pop()
		if s.dropped == 0 {
			s.dropAt = time.Now()
		}
		s.dropped++
	}
	if s.index == nil {
		s.index = map[eventKey]uint64{}
	}
	s.index[key] = s.first + uint64(len(s.queue))
	s.queue = append(s.queue, ev)
}

// pop removes and returns the oldest queued event. feed.mu is held.
func (s *subscriber) pop() ConnectorEvent {
	ev := s.queue[0]
	s.queue[0] = ConnectorEvent{}
	s.queue = s.queue[1:]
	delete(s.index, keyOf(ev))
	s.first++
	if len(s.queue) == 0 {
		// Let a burst's memory go.
		s.queue, s.index = nil, nil
	}
	return ev
}

// takeDrops returns the number of dropped events to report now: at the
// end of a burst (final), or while it lasts once per dropWarnInterval.
// feed.mu is held.
func (s *subscriber) takeDrops(final bool) int {
	if s.dropped == 0 {
		return 0
	}
	now := time.Now()
	if !final && now.Sub(s.dropAt) < dropWarnInterval {
		return 0
	}
	n := s.dropped
	s.dropped, s.dropAt = 0, now
	return n
}

func (f *feed) warnDrops(s *subscriber, n int) {
	f.logger.Warn("toolkit: event receiver too slow; oldest events dropped", "receiver", s.name, "dropped", n, "queue_limit", s.max)
}

// drain delivers s's events until its queue is empty or s is cancelled.
func (f *feed) drain(s *subscriber) {
	for {
		f.mu.Lock()
		if !s.done && len(s.queue) > 0 {
			ev := s.pop()
			f.mu.Unlock()
			f.call(s, ev)
			continue
		}
		if n := s.takeDrops(true); n > 0 {
			f.mu.Unlock()
			f.warnDrops(s, n)
			continue // events may have come meanwhile
		}
		s.running = false
		f.active--
		if f.active == 0 {
			close(f.idle)
		}
		f.mu.Unlock()
		return
	}
}

// call hands one event to s, recovering a panic.
func (f *feed) call(s *subscriber, ev ConnectorEvent) {
	defer func() {
		if r := recover(); r != nil {
			f.logger.Error("toolkit: event receiver panicked", "receiver", s.name, "event", ev.Kind.String(), "namespace", ev.Namespace, "panic", fmt.Sprint(r))
		}
	}()
	s.fn(ev)
}

// wait blocks until no delivery goroutine runs, or at most d when d > 0.
// It reports whether the deliveries ended.
func (f *feed) wait(d time.Duration) bool {
	var expired <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	for {
		f.mu.Lock()
		if f.active == 0 {
			f.mu.Unlock()
			return true
		}
		idle := f.idle
		f.mu.Unlock()
		select {
		case <-idle:
		case <-expired:
			return false
		}
	}
}

// pending returns the number of undelivered events of all subscribers.
func (f *feed) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.subs {
		n += len(s.queue)
	}
	return n
}

// deliverToDelegate hands one event to the delegate.
func (tk *Toolkit) deliverToDelegate(ev ConnectorEvent) { tk.delegate.OnEvent(ev) }
