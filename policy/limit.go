package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/llmkit/toolkit"
)

// Limit is a rate limit on the calls that match its conditions (empty
// conditions match every call). Every limit a call matches applies: the
// call runs only when each has room, and a refused call uses up none.
type Limit struct {
	// Name names the limit in refusals and the audit; "rate_limits[i]"
	// when empty.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Per says who shares a budget: "principal" (each principal has its
	// own), "tool" (each tool has its own, shared by every caller),
	// "principal_tool" (each principal has one per tool), or "" / "all"
	// (one budget for every matching call).
	Per string `json:"per,omitempty" yaml:"per,omitempty"`
	// Principals, Namespaces and Tools are glob patterns, as in Rule, of
	// the calls the limit counts.
	Principals []string `json:"principals,omitempty" yaml:"principals,omitempty"`
	Namespaces []string `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`
	Tools      []string `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Rate is how many calls a period allows: "10/s", "100/m", "1000/h",
	// "5/10s".
	Rate Rate `json:"rate" yaml:"rate"`
	// Burst is how many calls may come at once (default: the count of
	// Rate, so "100/m" allows 100 at once and then one every 0.6s).
	Burst int `json:"burst,omitempty" yaml:"burst,omitempty"`
}

// Rate is a number of events per period, written "N/period" where the
// period is s, m, h or a Go duration ("5/10s").
type Rate struct {
	Count  int
	Period time.Duration
}

// Bounds of a Rate and a Burst.
const (
	maxRateCount  = 1_000_000_000
	minRatePeriod = time.Millisecond
	maxRatePeriod = 7 * 24 * time.Hour
)

// maxBuckets bounds the budgets one limit keeps (one per principal, tool
// or both). Past it, the budgets that are full again are dropped and, if
// that is not enough, some others, which then start full. Tests lower it.
var maxBuckets = 100_000

// ParseRate parses "N/period".
func ParseRate(s string) (Rate, error) {
	count, period, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("%w: rate %q: write it N/period, like 10/s or 100/m", toolkit.ErrBadParameter, truncate(s))
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 1 || n > maxRateCount {
		return Rate{}, fmt.Errorf("%w: rate %q: the count must be a whole number from 1 to %d", toolkit.ErrBadParameter, truncate(s), maxRateCount)
	}
	var d time.Duration
	switch p := strings.TrimSpace(period); p {
	case "s":
		d = time.Second
	case "m":
		d = time.Minute
	case "h":
		d = time.Hour
	default:
		if d, err = time.ParseDuration(p); err != nil {
			return Rate{}, fmt.Errorf("%w: rate %q: the period must be s, m, h or a duration like 10s", toolkit.ErrBadParameter, truncate(s))
		}
	}
	if d < minRatePeriod || d > maxRatePeriod {
		return Rate{}, fmt.Errorf("%w: rate %q: the period must be from %v to %v", toolkit.ErrBadParameter, truncate(s), minRatePeriod, maxRatePeriod)
	}
	return Rate{Count: n, Period: d}, nil
}

// String writes r as ParseRate reads it.
func (r Rate) String() string {
	switch r.Period {
	case time.Second:
		return fmt.Sprintf("%d/s", r.Count)
	case time.Minute:
		return fmt.Sprintf("%d/m", r.Count)
	case time.Hour:
		return fmt.Sprintf("%d/h", r.Count)
	}
	return fmt.Sprintf("%d/%v", r.Count, r.Period)
}

// MarshalText writes r as String does.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads r as ParseRate does.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Check reports what is wrong with l, naming the field, in an error
// wrapping toolkit.ErrBadParameter.
func (l Limit) Check() error {
	if n := max(len(l.Principals), len(l.Namespaces), len(l.Tools)); n > maxPatterns {
		return fmt.Errorf("%w: %d patterns in one list, at most %d", toolkit.ErrBadParameter, n, maxPatterns)
	}
	_, err := compileLimit(l, 0)
	return err
}

// limit is a compiled Limit with its budgets.
type limit struct {
	name       string
	spec       string // what identifies the limit across reloads
	per        perKind
	principals globs
	namespaces globs
	tools      globs
	every      rate.Limit
	burst      int

	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
}

type perKind uint8

const (
	perAll perKind = iota
	perPrincipal
	perTool
	perPrincipalTool
)

// bucketKey identifies one budget of a limit.
type bucketKey struct{ principal, ns, tool string }

// compileLimit checks and compiles l, the i-th limit.
func compileLimit(l Limit, i int) (*limit, error) {
	c := &limit{name: l.Name, buckets: map[bucketKey]*rate.Limiter{}}
	if c.name == "" {
		c.name = fmt.Sprintf("rate_limits[%d]", i)
	}
	switch l.Per {
	case "", "all":
		c.per = perAll
	case "principal":
		c.per = perPrincipal
	case "tool":
		c.per = perTool
	case "principal_tool":
		c.per = perPrincipalTool
	default:
		return nil, fmt.Errorf("%w: per %q: use principal, tool, principal_tool or all", toolkit.ErrBadParameter, truncate(l.Per))
	}
	if l.Rate.Count < 1 || l.Rate.Count > maxRateCount || l.Rate.Period < minRatePeriod || l.Rate.Period > maxRatePeriod {
		return nil, fmt.Errorf("%w: rate: missing or out of range: write it N/period, like 10/s", toolkit.ErrBadParameter)
	}
	if l.Burst < 0 || l.Burst > maxRateCount {
		return nil, fmt.Errorf("%w: burst %d: use 1 to %d (0: the rate's count)", toolkit.ErrBadParameter, l.Burst, maxRateCount)
	}
	var err error
	if c.principals, err = compileGlobs("principals", l.Principals); err != nil {
		return nil, err
	}
	if c.namespaces, err = compileGlobs("namespaces", l.Namespaces); err != nil {
		return nil, err
	}
	if c.tools, err = compileGlobs("tools", l.Tools); err != nil {
		return nil, err
	}
	c.every = rate.Limit(float64(l.Rate.Count) / l.Rate.Period.Seconds())
	c.burst = l.Burst
	if c.burst == 0 {
		c.burst = l.Rate.Count
	}
	c.spec = fmt.Sprintf("%q %v %q %q %q %v %d", c.name, c.per, l.Principals, l.Namespaces, l.Tools, l.Rate, c.burst)
	return c, nil
}

// matches reports whether the limit counts req.
func (l *limit) matches(req *toolkit.PolicyRequest) bool {
	return l.principals.match(req.Principal) && l.namespaces.match(req.Namespace) && l.tools.match(req.Tool.Name())
}

// bucketKey returns the key of req's budget in l.
func (l *limit) bucketKey(req *toolkit.PolicyRequest) bucketKey {
	var k bucketKey
	switch l.per {
	case perPrincipal:
		k.principal = req.Principal
	case perTool:
		k.ns, k.tool = req.Namespace, req.Tool.Name()
	case perPrincipalTool:
		k = bucketKey{req.Principal, req.Namespace, req.Tool.Name()}
	}
	return k
}

// reserve takes one call from req's budget at now. It returns the
// reservation to cancel if another limit refuses the call, or, when the
// budget is empty, how long until it has room.
func (l *limit) reserve(req *toolkit.PolicyRequest, now time.Time) (*rate.Reservation, time.Duration) {
	k := l.bucketKey(req)
	l.mu.Lock()
	b := l.buckets[k]
	if b == nil {
		l.prune(now)
		b = rate.NewLimiter(l.every, l.burst) // full
		l.buckets[k] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return nil, time.Duration(math.MaxInt64)
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return r, 0
}

// prune makes room for a new budget when the limit holds maxBuckets:
// budgets that are full again go first, then any. l.mu is held.
func (l *limit) prune(now time.Time) {
	if len(l.buckets) < maxBuckets {
		return
	}
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxBuckets*9/10 {
			break
		}
		delete(l.buckets, k)
	}
}

// limitSet is the compiled list of limits.
type limitSet []*limit

// admit takes one call from every budget req counts against. When one is
// empty, it gives back what it took and returns the refusing limit's
// decision, saying when to retry; otherwise it returns ok.
func (s limitSet) admit(req *toolkit.PolicyRequest, now time.Time) (toolkit.Decision, bool) {
	var buf [4]*rate.Reservation
	taken := buf[:0]
	for _, l := range s {
		if !l.matches(req) {
			continue
		}
		r, wait := l.reserve(req, now)
		if r == nil {
			for _, t := range taken {
				t.CancelAt(now)
			}
			return toolkit.Decision{Effect: toolkit.Deny, Rule: l.name, RetryAfter: max(wait, time.Millisecond),
				Reason: fmt.Sprintf("more than %v calls", l.rateText())}, false
		}
		taken = append(taken, r)
	}
	return toolkit.Decision{}, true
}

// rateText describes the limit's rate in a refusal.
func (l *limit) rateText() string {
	return fmt.Sprintf("%.4g per second (burst %d)", float64(l.every), l.burst)
}
