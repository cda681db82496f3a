package toolkit

import (
	"slices"
	"sync"
)

// Notify makes the toolkit signal c as part of every change that produces
// an event of one of kinds (of any kind when none is given), and returns a
// function that stops the signals.
//
// Unlike a Subscribe function, the signal is not queued: it is sent while
// the change is made, once its items are in List and Lookup and before
// the method that made it returns. So after AddTool, RemoveBuiltin or any
// other change made through the toolkit's own methods, whoever reads c
// knows of the change at once (read-your-writes), and a connector's change
// is signalled as soon as it is published, before its event reaches any
// subscriber. That is what a cache of the toolkit's items needs: on a
// signal it lists again (model.Catalog does).
//
// The toolkit never blocks sending on c: a send that would block is
// dropped, so c should be buffered (a capacity of 1 is enough for a
// receiver that only asks "did anything change since I last looked?": a
// pending signal already says so). The signal carries nothing; read the
// state with List, Lookup or Connectors. A nil c receives nothing. stop
// may be called any number of times; once it returns, no signal is sent.
func (tk *Toolkit) Notify(c chan<- struct{}, kinds ...ConnectorEventKind) (stop func()) {
	if c == nil {
		return func() {}
	}
	n := &notifier{c: c, kinds: slices.Clone(kinds)}
	tk.feed.mu.Lock()
	tk.feed.notes = append(tk.feed.notes, n)
	tk.feed.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			tk.feed.mu.Lock()
			tk.feed.notes = slices.DeleteFunc(tk.feed.notes, func(o *notifier) bool { return o == n })
			tk.feed.mu.Unlock()
		})
	}
}

// notifier is one channel registered with Notify.
type notifier struct {
	c     chan<- struct{}
	kinds []ConnectorEventKind // nil: every kind
}

// signal sends on n.c, without blocking, if one of events is of a kind n
// wants. feed.mu is held.
func (n *notifier) signal(events []ConnectorEvent) {
	for _, ev := range events {
		if len(n.kinds) == 0 || slices.Contains(n.kinds, ev.Kind) {
			select {
			case n.c <- struct{}{}:
			default:
			}
			return
		}
	}
}
