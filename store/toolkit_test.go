package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

// delegate serves a store as the user namespace and forwards events.
type delegate struct {
	dir    string
	events chan toolkit.ConnectorEvent
}

func (d *delegate) OnEvent(ev toolkit.ConnectorEvent) { d.events <- ev }

func (d *delegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}

func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url != toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	return store.Open(d.dir, onEvent)
}

func TestToolkitUserNamespace(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.md"), []byte(promptFile("Greet someone nicely", "Hello {{ .name }}")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &delegate{dir: dir, events: make(chan toolkit.ConnectorEvent, 256)}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(failAfter):
			t.Error("toolkit Run did not return")
		}
	}()

	list := func() (prompts, uris []string) {
		t.Helper()
		resp, err := tk.List(ctx, toolkit.ListRequest{Namespace: toolkit.UserNamespace})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range resp.Items {
			if it.Namespace != toolkit.UserNamespace {
				t.Errorf("item %v in namespace %q", it.Name, it.Namespace)
			}
			switch it.Type {
			case toolkit.ListTypePrompts:
				prompts = append(prompts, it.Name)
			case toolkit.ListTypeResources:
				uris = append(uris, it.URI)
			default:
				t.Errorf("user namespace serves a %s", it.Type)
			}
		}
		return prompts, uris
	}
	prompts, uris := list()
	if !slices.Equal(prompts, []string{"greet"}) || len(uris) != 1 {
		t.Fatalf("user items: prompts %v resources %v", prompts, uris)
	}
	v, err := tk.Lookup(ctx, "user.greet")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := v.(toolkit.Prompt); !ok || p.Title() != "Greet someone nicely" {
		t.Errorf("Lookup(user.greet) = %#v", v)
	}
	if _, err := tk.Lookup(ctx, uris[0]+"#user"); err != nil {
		t.Errorf("Lookup(%s#user): %v", uris[0], err)
	}

	// A new prompt file shows up in the next List after its event.
	if err := os.WriteFile(filepath.Join(dir, "plan.md"), []byte(promptFile("Plan the next steps", "Plan {{ . }}")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, d.events, toolkit.ConnectorEventPromptListChanged)
	if prompts, _ := list(); !slices.Equal(prompts, []string{"greet", "plan"}) {
		t.Errorf("after adding: prompts %v", prompts)
	}
	if _, err := tk.Lookup(ctx, "user.plan"); err != nil {
		t.Errorf("Lookup(user.plan): %v", err)
	}

	// Removing it removes it.
	if err := os.Remove(filepath.Join(dir, "plan.md")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, d.events, toolkit.ConnectorEventPromptListChanged)
	if _, err := tk.Lookup(ctx, "user.plan"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("Lookup(user.plan) after removal: err = %v", err)
	}

	// A resource edit reaches the delegate as an update with the URI.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("more notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, d.events, toolkit.ConnectorEventResourceUpdated)
	if ev.URI != uris[0] || ev.Namespace != toolkit.UserNamespace {
		t.Errorf("update event: %+v", ev)
	}
}

// waitEvent consumes events until one of kind arrives.
func waitEvent(t *testing.T, events chan toolkit.ConnectorEvent, kind toolkit.ConnectorEventKind) toolkit.ConnectorEvent {
	t.Helper()
	timeout := time.After(failAfter)
	for {
		select {
		case ev := <-events:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %v event", kind)
		}
	}
}
