package toolkit

import (
	"fmt"
	"sync"
)

// dispatcher delivers events to the delegate in the order they were queued,
// on a goroutine of its own that holds no toolkit lock, so the delegate may
// call back into the toolkit (even RemoveConnector). The goroutine exists
// only while events are pending.
type dispatcher struct {
	mu      sync.Mutex
	queue   []ConnectorEvent
	running bool
	idle    *sync.Cond
	deliver func(ConnectorEvent)
}

func (d *dispatcher) push(events ...ConnectorEvent) {
	if len(events) == 0 || d.deliver == nil {
		return
	}
	d.mu.Lock()
	d.queue = append(d.queue, events...)
	if !d.running {
		d.running = true
		go d.drain()
	}
	d.mu.Unlock()
}

func (d *dispatcher) drain() {
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			d.running = false
			d.queue = nil
			if d.idle != nil {
				d.idle.Broadcast()
			}
			d.mu.Unlock()
			return
		}
		ev := d.queue[0]
		d.queue[0] = ConnectorEvent{}
		d.queue = d.queue[1:]
		d.mu.Unlock()
		d.deliver(ev)
	}
}

// wait blocks until every queued event has been delivered.
func (d *dispatcher) wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idle == nil {
		d.idle = sync.NewCond(&d.mu)
	}
	for d.running {
		d.idle.Wait()
	}
}

// queue hands events to the dispatcher. It is called with tk.mu held, so
// events are queued in the order of the changes they describe. Nothing is
// delivered while New is still applying options.
func (tk *Toolkit) queue(events ...ConnectorEvent) {
	if tk.building || tk.delegate == nil {
		return
	}
	tk.events.push(events...)
}

// deliver hands one event to the delegate, recovering a panic.
func (tk *Toolkit) deliver(ev ConnectorEvent) {
	defer func() {
		if r := recover(); r != nil {
			tk.logger.Error("toolkit: delegate OnEvent panicked", "event", ev.Kind.String(), "namespace", ev.Namespace, "panic", fmt.Sprint(r))
		}
	}()
	tk.delegate.OnEvent(ev)
}

// WaitEvents blocks until every event queued so far has been delivered to
// the delegate. Tests and shutdown code use it.
func (tk *Toolkit) WaitEvents() { tk.events.wait() }
