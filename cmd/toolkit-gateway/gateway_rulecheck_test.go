//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestGatewayRulesMatchingNothing: with qualified_names, a rule written
// with the name clients see (calc_add) is warned about at load, with its
// file and line and the name form rules use, and again once every
// upstream has listed, since it matches no tool; a rule written with the
// server's own name (add in namespace calc) is not.
func TestGatewayRulesMatchingNothing(t *testing.T) {
	calc := startCalc(t)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
qualified_names: true
policy:
  rules:
    - name: no-exposed
      effect: deny
      tools: [calc_add]
    - name: no-add
      effect: deny
      namespaces: [calc]
      tools: [add]
servers:
  - name: calc
    url: %s
`, calc.URL))
	g := startGateway(t, config)
	warned := func(text string) func(map[string]any) bool {
		return func(r map[string]any) bool {
			msg, _ := r["msg"].(string)
			return r["level"] == "WARN" && strings.Contains(msg, text)
		}
	}
	load := g.waitLog(t, 0, warned(config+`:7: policy.rules[0].tools[0]: "calc_add" looks like the name clients see a tool of server calc under`))
	if msg := fmt.Sprint(load["msg"]); !strings.Contains(msg, `(tools: ["add"], namespaces: [calc])`) {
		t.Errorf("the load warning: %s", msg)
	}
	g.waitLog(t, 0, upstreamReady("calc"))
	g.waitLog(t, 0, warned(config+`:7: policy.rules[0].tools[0]: "calc_add" matches no tool of the servers`))
	if r := g.waitLog(t, 0, func(r map[string]any) bool { return r["msg"] == "policy rules checked against the upstreams' tools" }); r["unmatched"] != float64(1) {
		t.Errorf("the check: %v", r)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.records {
		if msg := fmt.Sprint(r["msg"]); strings.Contains(msg, "rules[1]") {
			t.Errorf("a warning about the rule that matches: %s", msg)
		}
	}
}
