package toolkit

import (
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/schemaguard"
)

// toolSchemas caches a tool's resolved input and output schemas.
type toolSchemas struct {
	once sync.Once
	resolvedSchemas
	err error
}

// resolvedSchemas are a tool's resolved schemas, each with the plan that
// bounds the validation of a value when that depends on the value (nil
// for almost every schema: see schemaguard.Check).
type resolvedSchemas struct {
	in, out         *jsonschema.Resolved
	inPlan, outPlan *schemaguard.Plan
	// inFlat accepts the inputs that in accepts, faster, when the input
	// schema is flat (see flatSchema); nil otherwise.
	inFlat *flatSchema
}

// schemasOf returns the resolved schemas of a tool: cached on its entry, or
// in the toolkit's cache of pointer-typed tools it does not hold, or
// resolved now.
func (tk *Toolkit) schemasOf(t Tool, e *entry) *toolSchemas {
	if e != nil && e.schemas != nil {
		e.schemas.once.Do(func() { e.schemas.resolve(t) })
		return e.schemas
	}
	if isPointer(t) {
		return tk.adhoc.schemas(t)
	}
	sc := &toolSchemas{}
	sc.resolve(t)
	return sc
}

// adhocGen bounds each generation of an adhocCache.
const adhocGen = 256

// adhocCache holds the resolved schemas of pointer-typed tools that are
// called by value but that the toolkit does not hold (a model's tools
// made for one request, say), so that calling one again does not resolve
// its schemas again. It keeps at most two generations of adhocGen
// entries: when the current one is full it becomes the old one and the old
// one is dropped; a hit in the old generation moves the entry back to the
// current one. Tools in use thus stay cached (an approximation of LRU
// without a list), and tools no longer called are released after at most
// 2*adhocGen other tools were.
//
// Weak keys (package weak, runtime.AddCleanup) would release an entry with
// its tool, but not reliably: the resolved schemas may point into the tool
// itself (a schema held by value in the tool's struct), which keeps the
// tool reachable from the cache forever, and cleanups need not run for
// tiny or zero-size values. A bound holds whatever the tools look like.
type adhocCache struct {
	mu       sync.Mutex
	cur, old map[Tool]*toolSchemas
}

// schemas returns t's cached schemas, resolving them on a miss (outside
// the lock: resolving runs the tool's code).
func (c *adhocCache) schemas(t Tool) *toolSchemas {
	c.mu.Lock()
	sc, ok := c.cur[t]
	if !ok {
		if sc, ok = c.old[t]; ok {
			delete(c.old, t)
			c.put(t, sc)
		}
	}
	c.mu.Unlock()
	if ok {
		return sc
	}
	sc = &toolSchemas{}
	sc.resolve(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.cur[t]; ok {
		return prev // resolved meanwhile by another call
	}
	c.put(t, sc)
	return sc
}

// put adds an entry to the current generation, starting a new one when it
// is full. c.mu must be held.
func (c *adhocCache) put(t Tool, sc *toolSchemas) {
	if len(c.cur) >= adhocGen || c.cur == nil {
		c.old, c.cur = c.cur, make(map[Tool]*toolSchemas, adhocGen)
	}
	c.cur[t] = sc
}

// resolve resolves a tool's schemas once; the input schema must describe an
// object.
func (sc *toolSchemas) resolve(t Tool) {
	sc.resolvedSchemas, sc.err = resolveToolSchemas(t)
}

// resolveToolSchemas checks a tool's schemas as untrusted input
// (schemaguard: bounded size and depth, no $ref cycle) before resolving
// them, so that neither resolving nor validating can run away. It runs
// once per tool, never per call.
func resolveToolSchemas(t Tool) (r resolvedSchemas, err error) {
	s, err := t.InputSchema()
	if err != nil {
		return r, fmt.Errorf("input schema: %w", err)
	}
	if s != nil {
		if !isObjectSchema(s) {
			return r, errors.New("input schema does not describe an object")
		}
		if r.inPlan, err = schemaguard.Check(s); err != nil {
			return r, fmt.Errorf("input schema: %w", err)
		}
		if r.in, err = s.Resolve(nil); err != nil {
			return resolvedSchemas{}, fmt.Errorf("input schema: %w", err)
		}
		if r.inPlan == nil {
			r.inFlat = newFlatSchema(s)
		}
	}
	s, err = t.OutputSchema()
	if err != nil {
		return resolvedSchemas{}, fmt.Errorf("output schema: %w", err)
	}
	if s != nil {
		if r.outPlan, err = schemaguard.Check(s); err != nil {
			return resolvedSchemas{}, fmt.Errorf("output schema: %w", err)
		}
		if r.out, err = s.Resolve(nil); err != nil {
			return resolvedSchemas{}, fmt.Errorf("output schema: %w", err)
		}
	}
	return r, nil
}

func isObjectSchema(s *jsonschema.Schema) bool {
	if s.Type != "" {
		return s.Type == "object"
	}
	return len(s.Types) == 1 && s.Types[0] == "object"
}
