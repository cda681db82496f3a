package toolkit

import (
	"testing"
)

// received reports whether c holds a signal, taking it.
func received(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A change made through the toolkit's methods is signalled before the
// method returns, whatever its subscribers are doing: here the only
// subscriber is stuck in its first event for the whole test.
func TestNotifyReadYourWrites(t *testing.T) {
	tk, err := New()
	if err != nil {
		t.Fatal(err)
	}
	stuck, release := make(chan struct{}, 1), make(chan struct{})
	defer func() { close(release); tk.WaitEvents() }()
	cancel := tk.Subscribe(func(ConnectorEvent) {
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release
	})
	defer cancel()

	tools := make(chan struct{}, 1)
	stopTools := tk.Notify(tools, ConnectorEventToolListChanged)
	all := make(chan struct{}, 1)
	defer tk.Notify(all)()

	if err := tk.AddTool(newTool("a")); err != nil {
		t.Fatal(err)
	}
	if !received(tools) || !received(all) {
		t.Fatal("AddTool returned before signalling the change")
	}
	<-stuck // the subscriber holds its first event from now on

	if err := tk.AddPrompt(&testPrompt{name: "p"}); err != nil {
		t.Fatal(err)
	}
	if received(tools) {
		t.Error("a prompt change was signalled to a channel that asked for tool changes only")
	}
	if !received(all) {
		t.Error("a prompt change was not signalled to a channel that asked for every kind")
	}

	// Two changes, one buffered signal: the second send is dropped, not
	// waited for.
	if err := tk.AddTool(newTool("b")); err != nil {
		t.Fatal(err)
	}
	if err := tk.RemoveBuiltin("a"); err != nil {
		t.Fatal(err)
	}
	if !received(tools) || received(tools) {
		t.Error("two changes: want exactly one pending signal")
	}

	// An unbuffered channel nobody reads never blocks the toolkit.
	defer tk.Notify(make(chan struct{}))()
	if err := tk.RemoveBuiltin("b"); err != nil {
		t.Fatal(err)
	}
	if !received(tools) || !received(all) {
		t.Error("RemoveBuiltin was not signalled")
	}

	stopTools()
	stopTools()
	if err := tk.AddTool(newTool("c")); err != nil {
		t.Fatal(err)
	}
	if received(tools) {
		t.Error("a signal after stop")
	}
	if !received(all) {
		t.Error("stopping one channel stopped another")
	}
	if stop := tk.Notify(nil); stop == nil {
		t.Error("Notify(nil) returned no stop function")
	}
}

// A connector's change is signalled once it is in List and Lookup, before
// its event is delivered.
func TestNotifyConnectorChange(t *testing.T) {
	d := newDelegate()
	tk, err := New(WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	c := make(chan struct{}, 1)
	defer tk.Notify(c, ConnectorEventToolListChanged)()
	d.conn("test://srv").setTools(newTool("remote"))
	if !received(c) {
		t.Fatal("the connector's new tool was not signalled")
	}
	if _, err := tk.LookupItem(t.Context(), "srv.remote"); err != nil {
		t.Errorf("signalled before the tool was in Lookup: %v", err)
	}
	tk.WaitEvents()
}
