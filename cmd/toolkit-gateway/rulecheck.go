package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
)

// ruleCheck warns about the tool patterns of the policy's rules that
// match no tool of any configured server. It can tell only once the
// servers have listed their tools: the check runs when every upstream of
// the configuration in force has been ready once (after a start or a
// reload), against the tools they list then, and says so; an upstream
// that never becomes ready delays it (its state is logged).
type ruleCheck struct {
	mu      sync.Mutex
	cfg     *Config
	waiting map[string]bool // upstreams not ready yet; nil once checked
}

// start arms the check for cfg.
func (rc *ruleCheck) start(cfg *Config) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.cfg, rc.waiting = cfg, nil
	if cfg.Policy == nil || len(cfg.Policy.Rules) == 0 {
		return
	}
	rc.waiting = map[string]bool{}
	for _, s := range cfg.Servers {
		rc.waiting[s.Name] = true
	}
}

// ready notes that the upstream of namespace ns is ready, and returns
// the configuration to check when it was the last one waiting.
func (rc *ruleCheck) ready(ns string) *Config {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.waiting == nil || !rc.waiting[ns] {
		return nil
	}
	delete(rc.waiting, ns)
	if len(rc.waiting) > 0 {
		return nil
	}
	rc.waiting = nil
	return rc.cfg
}

// noteUpstreamState runs the rule check when ev makes the last upstream
// that had not listed ready.
func (g *gateway) noteUpstreamState(ev toolkit.ConnectorEvent) {
	if ev.State.Status != toolkit.StatusReady {
		return
	}
	if cfg := g.rules.ready(ev.Namespace); cfg != nil {
		g.checkRuleTools(cfg)
	}
}

// checkRuleTools warns, with its file and line, about each tool pattern
// of cfg's rules that matches no tool the servers list now.
func (g *gateway) checkRuleTools(cfg *Config) {
	ctx := policy.Unfiltered(context.Background())
	tools := map[string][]string{}
	for _, s := range cfg.Servers {
		resp, err := g.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools, Namespace: s.Name})
		if err != nil {
			continue
		}
		for _, t := range resp.Tools {
			tools[s.Name] = append(tools[s.Name], t.Name())
		}
	}
	addSkillTools(ctx, g.tk, tools)
	p := cfg.Policy
	n := 0
	defer func() { g.logger.Info("policy rules checked against the upstreams' tools", "unmatched", n) }()
	for i, r := range p.Rules {
		unmatched := r.UnmatchedTools(tools)
		if len(unmatched) == 0 || i >= len(p.toolsAt) {
			continue
		}
		for j, pat := range r.Tools {
			for _, u := range unmatched {
				if u == pat && j < len(p.toolsAt[i]) {
					n++
					g.logger.Warn(fmt.Sprintf("configuration: %s: %q matches no tool of the servers as every one of them lists now: the rule never applies through it (rules name a tool as its server does, in its namespace)", p.toolsAt[i][j], pat))
					break
				}
			}
		}
	}
}
