package toolkit

import (
	"context"
	"sync"
	"testing"

	"github.com/llmkit/toolkit/skill"
)

// skillConn is a fakeConn that serves skills.
type skillConn struct {
	*fakeConn
	mu     sync.Mutex
	skills []Skill
}

func (c *skillConn) ListSkills(context.Context) ([]Skill, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Skill(nil), c.skills...), nil
}

// skillDelegate makes skillConns.
type skillDelegate struct {
	*fakeDelegate
	made chan *skillConn
}

func (d *skillDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	c, _ := d.fakeDelegate.CreateConnector(url, onEvent)
	sc := &skillConn{fakeConn: c.(*fakeConn)}
	d.made <- sc
	return sc, nil
}

// A connector's skills are listed under its namespace; its skill list
// changes reach the subscribers, and so does its removal.
func TestConnectorSkills(t *testing.T) {
	d := &skillDelegate{fakeDelegate: newDelegate(), made: make(chan *skillConn, 4)}
	tk, err := New(WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tk.AddConnectorNS("up", "test://up"); err != nil {
		t.Fatal(err)
	}
	c := <-d.made
	for c.url != "test://up" { // the user connector comes first
		c = <-d.made
	}
	s, err := skill.New([]byte("---\nname: review\ndescription: Reviews.\n---\nLook.\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.skills = []Skill{s}
	c.mu.Unlock()
	c.onEvent(SkillListChangeEvent())
	for ev := d.next(t); ev.Kind != ConnectorEventSkillListChanged; ev = d.next(t) {
	}
	if it, err := tk.LookupSkill(ctx, "up.review"); err != nil || it.Skill != s {
		t.Fatalf("LookupSkill: %v", err)
	}
	if err := tk.RemoveConnector("test://up"); err != nil {
		t.Fatal(err)
	}
	for {
		ev := d.next(t)
		if ev.Kind == ConnectorEventSkillListChanged {
			if ev.Namespace != "up" {
				t.Fatalf("event %+v", ev)
			}
			break
		}
	}
	if list := tk.ListSkills(ctx); len(list) != 0 {
		t.Fatalf("skills after removal: %v", list)
	}
}
