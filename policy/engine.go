package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/llmkit/toolkit"
)

// MetricQuarantines is the name of the counter of quarantined tool
// definitions, by namespace (attribute toolkit.namespace); see
// WithMeterProvider.
const MetricQuarantines = "toolkit.policy.quarantines"

// Engine is a toolkit.Policy: ordered allow, deny and ask rules with a
// default, rate limits and, with WithPins, pinned tool definitions. Give
// it to toolkit.WithPolicy. It is safe for concurrent use; SetConfig
// replaces its rules and limits while it runs.
type Engine struct {
	cfg    atomic.Pointer[compiled]
	pins   *pins         // nil without WithPins
	shared *sharedLimits // nil without WithLimitStore
	logger *slog.Logger

	mu sync.Mutex // guards tk
	tk *toolkit.Toolkit
}

// compiled is a checked Config.
type compiled struct {
	rules  ruleSet
	limits limitSet
}

var _ toolkit.Policy = (*Engine)(nil)

// Option configures an Engine in New.
type Option func(*options) error

type options struct {
	store      PinStore
	limitStore *sharedLimits
	logger     *slog.Logger
	meters     metric.MeterProvider
	onEvent    func(PinEvent)
}

// WithPins pins tool definitions in store: the first time the engine sees
// a tool (of any namespace but "builtin"), it records a digest of its
// name, title, description, input and output schemas and annotations;
// when the tool later comes with another definition, the engine denies it
// (rule RulePinned, the reason naming the fields that changed), so it is
// neither listed nor called, until Approve accepts the new definition. A
// definition quarantined under one name that comes back under another is
// quarantined there too. The first sight of a tool is trusted. Each
// change is reported by one log line (Warn), a PinEvent (WithPinEvents)
// and the MetricQuarantines counter (WithMeterProvider).
func WithPins(store PinStore) Option {
	return func(o *options) error {
		if store == nil {
			return fmt.Errorf("%w: WithPins: nil store", toolkit.ErrBadParameter)
		}
		o.store = store
		return nil
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// WithMeterProvider makes the engine count quarantined definitions with
// the counter MetricQuarantines of a meter (toolkit.MeterName) of mp.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) error { o.meters = mp; return nil }
}

// WithPinEvents calls fn for every change of a pin (a first sight, a
// quarantine, an approval, a return to the approved definition), on the
// goroutine that noticed it, outside any lock of the engine.
func WithPinEvents(fn func(PinEvent)) Option {
	return func(o *options) error { o.onEvent = fn; return nil }
}

// New returns an engine with the rules and limits of cfg (see
// Config.Check). With WithPins it loads the store's pins; ctx bounds that.
func New(ctx context.Context, cfg Config, opts ...Option) (*Engine, error) {
	var o options
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	e := &Engine{logger: o.logger, shared: o.limitStore}
	if e.shared != nil {
		e.shared.logger = o.logger
	}
	c, err := compile(cfg, nil)
	if err != nil {
		return nil, err
	}
	e.cfg.Store(c)
	if o.store != nil {
		if e.pins, err = newPins(ctx, o.store, o.logger, o.onEvent); err != nil {
			return nil, err
		}
		if o.meters != nil {
			e.pins.quarantines, err = o.meters.Meter(toolkit.MeterName).Int64Counter(MetricQuarantines,
				metric.WithUnit("{definition}"), metric.WithDescription("Tool definitions quarantined because they changed, by namespace."))
			if err != nil {
				return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
			}
		}
	}
	return e, nil
}

// compile checks cfg and compiles it. Limits identical to one of prev
// keep its budgets.
func compile(cfg Config, prev *compiled) (*compiled, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	c := &compiled{}
	c.rules.def = cfg.Default
	for i, r := range cfg.Rules {
		cr, _ := compileRule(r, i) // checked
		c.rules.rules = append(c.rules.rules, cr)
		c.rules.hasAnn = c.rules.hasAnn || cr.hasAnn
	}
	old := map[string]*limit{}
	if prev != nil {
		for _, l := range prev.limits {
			old[l.spec] = l
		}
	}
	for i, l := range cfg.RateLimits {
		cl, _ := compileLimit(l, i) // checked
		if o := old[cl.spec]; o != nil {
			cl = o
		}
		c.limits = append(c.limits, cl)
	}
	return c, nil
}

// Decide decides about a call, or about listing a tool: a quarantined
// definition is denied (RulePinned); otherwise the first rule that
// matches decides, or the default; a call that is allowed or asked is
// then counted against the rate limits it matches, and refused with
// RetryAfter set when one of them has no room.
func (e *Engine) Decide(ctx context.Context, req toolkit.PolicyRequest) toolkit.Decision {
	c := e.cfg.Load()
	if e.pins == nil && len(c.rules.rules) == 0 && len(c.limits) == 0 {
		return toolkit.Decision{Effect: c.rules.def}
	}
	if req.Tool == nil {
		return toolkit.Decision{Effect: toolkit.Deny, Reason: "no tool"}
	}
	if e.pins != nil {
		if ok, reason := e.pins.check(req.Namespace, req.Tool); !ok {
			return toolkit.Decision{Effect: toolkit.Deny, Rule: RulePinned, Reason: reason}
		}
	}
	d := c.rules.decide(ctx, &req)
	if req.Listing || d.Effect == toolkit.Deny || len(c.limits) == 0 {
		return d
	}
	if e.shared != nil {
		if refused, ok := e.shared.admit(ctx, c.limits, &req); !ok {
			return refused
		}
	} else if refused, ok := c.limits.admit(&req, time.Now()); !ok {
		return refused
	}
	return d
}

// AllowsAll reports whether the engine allows every call as it stands: no
// rules (or a default of allow and none), no rate limits, no pins. The
// toolkit asks it before building a request, so that a policy without
// rules costs a call next to nothing.
func (e *Engine) AllowsAll() bool {
	if e.pins != nil {
		return false
	}
	c := e.cfg.Load()
	return len(c.rules.rules) == 0 && c.rules.def == toolkit.Allow && len(c.limits) == 0
}

// SetConfig replaces the rules, the default and the rate limits. Limits
// that stay the same keep their budgets. The toolkit the engine is bound
// to announces the change (toolkit.ConnectorEventPolicyChanged), so that
// lists are made again. An invalid cfg changes nothing.
func (e *Engine) SetConfig(cfg Config) error {
	c, err := compile(cfg, e.cfg.Load())
	if err != nil {
		return err
	}
	e.cfg.Store(c)
	if tk := e.toolkit(); tk != nil {
		tk.NotifyPolicyChange("")
	}
	return nil
}

// errBound reports an engine given to a second toolkit.
var errBound = errors.New("the policy engine already decides for another toolkit")

// BindToolkit is called by toolkit.WithPolicy: the engine announces its
// changes through tk and, with pins, checks every tool list change of tk
// as it happens. An engine decides for one toolkit.
func (e *Engine) BindToolkit(tk *toolkit.Toolkit) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tk != nil {
		if e.tk == tk {
			return nil
		}
		return fmt.Errorf("%w: %w", toolkit.ErrConflict, errBound)
	}
	e.tk = tk
	if e.pins != nil {
		e.pins.bind(tk)
	}
	return nil
}

func (e *Engine) toolkit() *toolkit.Toolkit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tk
}

// errNoPins reports a pin operation on an engine without WithPins.
var errNoPins = fmt.Errorf("%w: the engine pins no definitions (WithPins)", toolkit.ErrNotImplemented)

// Approve accepts the changed definition of the tool with key
// "namespace.name" that waits for approval: the tool is listed and
// called again, and its new definition is the one pinned. The error
// wraps toolkit.ErrNotFound for a tool the pins do not know and
// toolkit.ErrConflict for one with nothing to approve.
func (e *Engine) Approve(ctx context.Context, key string) error {
	if e.pins == nil {
		return errNoPins
	}
	return e.pins.approve(ctx, key)
}

// Pins returns every pin, by key; Pin.Quarantined tells those that wait
// for approval. It is empty without WithPins.
func (e *Engine) Pins() []Pin {
	if e.pins == nil {
		return nil
	}
	return e.pins.list()
}

// ReloadPins saves the pins that changed and reads them all back from
// the store, so that approvals made by another process sharing the store
// take effect; the toolkit then announces the change.
func (e *Engine) ReloadPins(ctx context.Context) error {
	if e.pins == nil {
		return errNoPins
	}
	return e.pins.reload(ctx)
}

// SavePins saves the pins that changed since the last save. The engine
// saves by itself after each change it notices; call it before exiting to
// be sure.
func (e *Engine) SavePins(ctx context.Context) error {
	if e.pins == nil {
		return errNoPins
	}
	return e.pins.persist(ctx)
}
