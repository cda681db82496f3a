package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

// Limits.MaxListItems and Limits.MaxListBytes take values from a floor up to
// their defaults: they lower the caps, never lift them.
func TestListLimitOptionsRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
		ok   bool
	}{
		{"OptLimits: MaxListItems", OptLimits(Limits{MaxListItems: 1}), true},
		{"OptLimits: MaxListItems", OptLimits(Limits{MaxListItems: DefaultMaxListItems}), true},
		{"OptLimits: MaxListItems", OptLimits(Limits{MaxListItems: 0}), true},
		{"OptLimits: MaxListItems", OptLimits(Limits{MaxListItems: -5}), false},
		{"OptLimits: MaxListItems", OptLimits(Limits{MaxListItems: DefaultMaxListItems + 1}), false},
		{"OptLimits: MaxListBytes", OptLimits(Limits{MaxListBytes: 1024}), true},
		{"OptLimits: MaxListBytes", OptLimits(Limits{MaxListBytes: DefaultMaxListBytes}), true},
		{"OptLimits: MaxListBytes", OptLimits(Limits{MaxListBytes: 1023}), false},
		{"OptLimits: MaxListBytes", OptLimits(Limits{MaxListBytes: DefaultMaxListBytes + 1}), false},
		{"OptLimits: MaxListBytes", OptLimits(Limits{MaxListBytes: 1 << 40}), false},
	} {
		_, err := New("http://localhost:1/mcp", "app", "1", tc.opt)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), tc.name)):
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", tc.name, err)
		}
	}
}

// Limits.MaxListItems lowers the items a connector takes from its server: it
// stops paging at the limit and keeps the first ones, with one warning.
func TestOptMaxListItems(t *testing.T) {
	leakCheck(t)
	raw, _ := listingServer(t, listingShapes[1], 100, 20)
	logs := newLogCapture()
	r := start(t, "memory://items", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)), OptLimits(Limits{MaxListItems: 30}))
	tools, err := r.ListTools(context.Background())
	mustNotErr(t, err)
	if len(tools) != 30 || tools[0].Name() != "t0" || tools[29].Name() != "t29" {
		t.Errorf("%d tools kept, want t0 to t29", len(tools))
	}
	logs.waitFor(t, "more than a connector keeps", "limit=30")
}

// Limits.MaxListBytes lowers the bytes of definitions a connector keeps: it
// stops before the tool that would pass the limit.
func TestOptMaxListBytes(t *testing.T) {
	leakCheck(t)
	const limit = 4096
	shape := listingShapes[0]
	raw, _ := listingServer(t, shape, 200, 50)
	logs := newLogCapture()
	r := start(t, "memory://bytes", false, OptDialer(raw.Dial), OptLogger(slogNew(logs)), OptLimits(Limits{MaxListBytes: limit}))
	tools, err := r.ListTools(context.Background())
	mustNotErr(t, err)
	// Each tool's definition is about 200 bytes: some fit, most do not.
	if n := len(tools); n < limit/(2*len(shape.tool(199))) || n*len(shape.tool(0))/2 > limit {
		t.Errorf("%d tools kept under a limit of %d bytes", n, limit)
	}
	logs.waitFor(t, "more than a connector keeps", fmt.Sprintf("limit_bytes=%d", limit))
}
