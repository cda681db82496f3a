package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/llmkit/toolkit"
)

// Bounds of a Config.
const (
	maxRules       = 10_000
	maxLimits      = 1_000
	maxConditions  = 64
	maxPatterns    = 1_000
	maxConfigBytes = 4 << 20
)

// Config is a policy's rules, default and rate limits. Its JSON form is
// what ParseConfig reads; its YAML form (the same keys) is the gateway's.
type Config struct {
	// Default is the effect when no rule matches (allow when absent).
	Default toolkit.Effect `json:"default,omitzero" yaml:"default,omitempty"`
	// Rules are tried in order; the first that matches decides.
	Rules []Rule `json:"rules,omitempty" yaml:"rules,omitempty"`
	// RateLimits all apply to the calls they match.
	RateLimits []Limit `json:"rate_limits,omitempty" yaml:"rate_limits,omitempty"`
}

// Check reports every problem of c, each naming the rule or limit and
// the field ("rules[2] (no-writes): tools[0]: ..."), in an error wrapping
// toolkit.ErrBadParameter.
func (c Config) Check() error {
	var errs []error
	fail := func(where string, err error) {
		if !errors.Is(err, toolkit.ErrBadParameter) {
			err = fmt.Errorf("%w: %w", toolkit.ErrBadParameter, err)
		}
		errs = append(errs, fmt.Errorf("%s: %w", where, err))
	}
	if c.Default > toolkit.Ask {
		fail("default", fmt.Errorf("%v: use allow, deny or ask", c.Default))
	}
	if len(c.Rules) > maxRules {
		fail("rules", fmt.Errorf("%d rules, at most %d", len(c.Rules), maxRules))
		return errors.Join(errs...)
	}
	if len(c.RateLimits) > maxLimits {
		fail("rate_limits", fmt.Errorf("%d limits, at most %d", len(c.RateLimits), maxLimits))
		return errors.Join(errs...)
	}
	names := map[string]int{}
	for i, r := range c.Rules {
		where := fmt.Sprintf("rules[%d]", i)
		if r.Name != "" {
			where += fmt.Sprintf(" (%s)", truncate(r.Name))
			if j, dup := names[r.Name]; dup {
				fail(where, fmt.Errorf("name %q is already that of rules[%d]", truncate(r.Name), j))
			}
			names[r.Name] = i
		}
		if err := r.Check(); err != nil {
			fail(where, err)
		}
	}
	for i, l := range c.RateLimits {
		where := fmt.Sprintf("rate_limits[%d]", i)
		if l.Name != "" {
			where += fmt.Sprintf(" (%s)", truncate(l.Name))
		}
		if err := l.Check(); err != nil {
			fail(where, err)
		}
	}
	return errors.Join(errs...)
}

// ParseConfig reads a Config from JSON (the keys of its json tags;
// unknown keys are errors) and checks it.
func ParseConfig(data []byte) (Config, error) {
	if len(data) > maxConfigBytes {
		return Config{}, fmt.Errorf("%w: policy: larger than %d bytes", toolkit.ErrBadParameter, maxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w: policy: %v", toolkit.ErrBadParameter, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, fmt.Errorf("%w: policy: data after the JSON object", toolkit.ErrBadParameter)
	}
	if err := c.Check(); err != nil {
		return Config{}, err
	}
	return c, nil
}
