package main

import (
	"context"
	"fmt"
	"github.com/llmkit/toolkit/redisstate"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
)

// PolicyConfig is the gateway's policy: rules that allow, deny or ask
// about each tool call, by principal ("token:N" for the N-th configured
// bearer token, "jwt:SUBJECT" for a JWT, "" without auth), namespace (the
// server's name), tool name, annotations and arguments. The first rule
// that matches decides; when none does, Default does. Deny also hides the
// tool from the principal's lists. Ask asks the calling client's user
// through an elicitation, and refuses the call when the client cannot be
// asked. Read again on SIGHUP. See package policy for every field.
type PolicyConfig struct {
	// Default is allow (when absent), deny or ask.
	Default toolkit.Effect `yaml:"default"`
	// Rules are tried in order. A rule names tools as their server does,
	// with the server's name as namespace (tools: [create_issue],
	// namespaces: [github]), never by the name clients see
	// (github_create_issue with qualified_names).
	Rules []policy.Rule `yaml:"rules"`

	// toolsAt is, for each rule, where each of its tool patterns is
	// written (file:line: field), for the warnings of checkRuleTools.
	toolsAt [][]string
}

// AuditLog is where the gateway writes one JSON line per tool call: time,
// principal, session, namespace, tool, the SHA-256 of the arguments,
// decision, rule, outcome, duration and upstream. The file is rotated by
// size: FILE becomes FILE.1, FILE.1 becomes FILE.2, and so on up to
// MaxFiles.
type AuditLog struct {
	// File is the log's path.
	File string `yaml:"file"`
	// MaxBytes is the size past which the file is rotated (default 100
	// MiB).
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxFiles is how many rotated files are kept (default 5).
	MaxFiles int `yaml:"max_files"`
	// Arguments also writes each call's arguments. They may hold secrets:
	// protect the log as the data.
	Arguments bool `yaml:"arguments"`
}

// Defaults and bounds of the audit log.
const (
	defaultAuditBytes = 100 << 20
	defaultAuditFiles = 5
	minAuditBytes     = 4 << 10
	maxAuditBytes     = 1 << 40
	maxAuditFiles     = 1000
)

// checkPolicy checks the policy, the rate limits, the pins file and the
// audit log.
func (v *validator) checkPolicy(c *Config) {
	if p := c.Policy; p != nil {
		names := map[string]int{}
		for i, r := range p.Rules {
			if err := r.Check(); err != nil {
				v.fail(plain(err), "policy", "rules", i)
			}
			v.checkRuleTools(c, p, i)
			if r.Name == "" {
				continue
			}
			if j, dup := names[r.Name]; dup {
				v.fail(fmt.Sprintf("%q is already the name of policy.rules[%d]", r.Name, j), "policy", "rules", i, "name")
			} else {
				names[r.Name] = i
			}
		}
	}
	for i, l := range c.RateLimits {
		if err := l.Check(); err != nil {
			v.fail(plain(err), "rate_limits", i)
		}
	}
	if c.PinsFile != "" {
		c.PinsFile = v.abs(c.PinsFile)
		if fi, err := os.Stat(filepath.Dir(c.PinsFile)); err != nil || !fi.IsDir() {
			v.fail(fmt.Sprintf("the directory of %s does not exist", c.PinsFile), "pins_file")
		}
	}
	if a := c.AuditLog; a != nil {
		if a.File == "" {
			v.fail("missing: the file to write to", "audit_log", "file")
		} else {
			a.File = v.abs(a.File)
			if fi, err := os.Stat(filepath.Dir(a.File)); err != nil || !fi.IsDir() {
				v.fail(fmt.Sprintf("the directory of %s does not exist", a.File), "audit_log", "file")
			}
		}
		switch {
		case a.MaxBytes == 0:
			a.MaxBytes = defaultAuditBytes
		case a.MaxBytes < minAuditBytes || a.MaxBytes > maxAuditBytes:
			v.fail(fmt.Sprintf("%d is out of range: use %d to %d (0 or absent: %d)", a.MaxBytes, minAuditBytes, int64(maxAuditBytes), defaultAuditBytes), "audit_log", "max_bytes")
		}
		switch {
		case a.MaxFiles == 0:
			a.MaxFiles = defaultAuditFiles
		case a.MaxFiles < 1 || a.MaxFiles > maxAuditFiles:
			v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (0 or absent: %d)", a.MaxFiles, maxAuditFiles, defaultAuditFiles), "audit_log", "max_files")
		}
	}
}

// checkRuleTools records where the tool patterns of rule i are written,
// and warns about a pattern written as the name a client sees a tool
// under (server_tool): rules name tools as their server does.
func (v *validator) checkRuleTools(c *Config, p *PolicyConfig, i int) {
	r := p.Rules[i]
	at := make([]string, len(r.Tools))
	for j, pat := range r.Tools {
		at[j] = v.where("policy", "rules", i, "tools", j)
		for _, s := range c.Servers {
			if s.Name == "" || !strings.HasPrefix(pat, s.Name+"_") {
				continue
			}
			v.warn(fmt.Sprintf("%q looks like the name clients see a tool of server %s under: rules name a tool as its server does, in its namespace (tools: [%q], namespaces: [%s]); as written it matches only a tool named so by its server", pat, s.Name, strings.TrimPrefix(pat, s.Name+"_"), s.Name), "policy", "rules", i, "tools", j)
			break
		}
	}
	p.toolsAt = append(p.toolsAt, at)
}

// plain is err's message without the sentinel's words, which say nothing
// to the reader of a configuration error.
func plain(err error) string {
	return strings.Replace(err.Error(), toolkit.ErrBadParameter.Error()+": ", "", 1)
}

// policyConfig returns the engine's configuration from c.
func (c *Config) policyConfig() policy.Config {
	pc := policy.Config{RateLimits: c.RateLimits}
	if c.Policy != nil {
		pc.Default, pc.Rules = c.Policy.Default, c.Policy.Rules
	}
	return pc
}

// newPolicyEngine makes the gateway's policy engine and the store of its
// pins (nil without pins_file or state): with a state section the pins and
// the rate limits' budgets are the fleet's, on Redis. The gateway always
// has an engine (without rules it allows everything), so that rules added
// to the file take effect on SIGHUP.
func newPolicyEngine(ctx context.Context, cfg *Config, state *redisstate.Store, logger *slog.Logger, meters *gatewayMetrics) (*policy.Engine, pinWatcher, error) {
	opts := []policy.Option{policy.WithLogger(logger)}
	store := pinStore(cfg, state)
	if store != nil {
		opts = append(opts, policy.WithPins(store))
	}
	if state != nil {
		opts = append(opts, policy.WithLimitStore(state.Limits(), cfg.State.RateLimits != "closed"))
	}
	if meters != nil {
		opts = append(opts, policy.WithMeterProvider(meters.provider))
	}
	eng, err := policy.New(ctx, cfg.policyConfig(), opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: %w", err)
	}
	return eng, store, nil
}

// pinsWatchInterval is how often the gateway looks at its pins file for
// approvals made by "toolkit-gateway pins approve".
const pinsWatchInterval = time.Second

// watchPins applies the approvals written to the pins file by another
// process within pinsWatchInterval, without waiting for SIGHUP, until the
// returned function is called; that function waits for the watch to end.
func (g *gateway) watchPins() (stop func()) {
	if g.pins == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		why := "the pins file changed"
		if g.state != nil {
			why = "the shared pins changed"
		}
		g.pins.Watch(ctx, pinsWatchInterval, func() { g.reloadPins(why) })
	}()
	return func() { cancel(); <-done }
}

// reloadPins reads the pins file again, for the reason given.
func (g *gateway) reloadPins(why string) {
	if err := g.eng.ReloadPins(context.Background()); err != nil {
		g.logger.Error("reading the pins file again; keeping the pins in force", "why", why, "error", err)
		return
	}
	g.logger.Info("pins reloaded", "why", why, "quarantined", len(quarantinedPins(g.eng.Pins())))
}

// reloadPolicy applies the policy and rate limits of next, and reads the
// pins file again (approvals made with "toolkit-gateway pins approve").
func (g *gateway) reloadPolicy(cur, next *Config) {
	if cur.PinsFile != next.PinsFile {
		g.logger.Warn("configuration change needs a restart; ignored", "field", "pins_file")
	}
	if !sameAudit(cur.AuditLog, next.AuditLog) {
		g.logger.Warn("configuration change needs a restart; ignored", "field", "audit_log")
	}
	if err := g.eng.SetConfig(next.policyConfig()); err != nil {
		g.logger.Error("policy reload refused; keeping the running policy", "error", err)
	} else {
		pc := next.policyConfig()
		g.logger.Info("policy reloaded", "rules", len(pc.Rules), "rate_limits", len(pc.RateLimits), "default", pc.Default)
	}
	if g.pins != nil {
		g.reloadPins("SIGHUP")
	}
}

// sameAudit reports whether two audit configurations are the same.
func sameAudit(a, b *AuditLog) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// quarantinedPins returns the pins that wait for approval.
func quarantinedPins(pins []policy.Pin) []policy.Pin {
	var out []policy.Pin
	for _, p := range pins {
		if p.Quarantined() {
			out = append(out, p)
		}
	}
	return out
}
