package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/skill"
)

// A server that declares the skills extension (SEP-2640) has its skills
// listed with skills/list when the connector connects and whenever it
// says its resources changed, and they are served by ListSkills, which
// makes the connector a toolkit.SkillLister. The go-sdk has no API for
// the extension, so the listing is a custom method. Each skill's files are
// read with resources/read when someone reads them, and verified against
// the entry's digests (package skill). An entry that breaks the rules
// (front matter, paths, digests, bounds) is logged, naming it, and
// skipped alone. A server without the extension costs no request.

// Bounds of a server's skill listing.
const (
	// maxSkillPages bounds the pages of one skills/list.
	maxSkillPages = 64
	// maxRemoteSkills bounds the skills kept of one server.
	maxRemoteSkills = 4096
)

// skillsListParams are the parameters of skills/list.
type skillsListParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// skillsListResult is a page of skills/list; each skill is decoded on its
// own, so that one bad entry does not fail the page.
type skillsListResult struct {
	sdk.ResultBase
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// skillCache holds a connector's skills as last listed.
type skillCache struct {
	mu     sync.Mutex
	list   []toolkit.Skill
	sum    string // the listing, to tell changes
	notify func() // reports a change of the list (the delegate's); may be nil
}

var _ toolkit.SkillLister = (*Connector)(nil)

// addSkillMethods lets a client send the methods of the skills extension.
func addSkillMethods(cl *sdk.Client) {
	_ = sdk.AddSendingCustomMethod[*skillsListParams, *skillsListResult](cl, "skills/list")
}

// ListSkills returns the server's skills as last listed; none when the
// server does not declare the skills extension. It does no I/O.
func (c *Connector) ListSkills(context.Context) ([]toolkit.Skill, error) {
	c.skills.mu.Lock()
	defer c.skills.mu.Unlock()
	return slices.Clone(c.skills.list), nil
}

// declaresSkillsIn reports whether caps declare the skills extension.
func declaresSkillsIn(caps *sdk.ServerCapabilities) bool {
	return caps != nil && caps.Extensions[skill.ExtensionID] != nil
}

// declaresSkills reports whether the server of the current session
// declared the skills extension.
func (c *Connector) declaresSkills() bool {
	m, err := c.State().Extensions.Map()
	if err != nil {
		return false
	}
	_, ok := m[skill.ExtensionID]
	return ok
}

// listSkills lists the server's skills on l when it declares the
// extension (declared), and reports a change of the list. A failure is
// logged and keeps the last list.
func (c *Connector) listSkills(ctx context.Context, l *live, declared bool) {
	var list []toolkit.Skill
	var sum strings.Builder
	if declared {
		cursor := ""
		for page := 0; page < maxSkillPages; page++ {
			res, err := sdk.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, l.sess, "skills/list", &skillsListParams{Cursor: cursor})
			if err != nil {
				c.logger.Warn("listing skills failed", "error", err)
				return
			}
			for _, raw := range res.Skills {
				if len(list) == maxRemoteSkills {
					c.logger.Warn("skipping skills past the bound", "max", maxRemoteSkills)
					break
				}
				s, err := c.remoteSkill(raw)
				if err != nil {
					c.logger.Warn("skipping skill", "error", err)
					continue
				}
				list = append(list, s)
				sum.Write(raw)
				sum.WriteByte(0)
			}
			if cursor = res.NextCursor; cursor == "" || len(list) == maxRemoteSkills {
				break
			}
		}
	}
	c.skills.mu.Lock()
	changed := c.skills.sum != sum.String()
	c.skills.list, c.skills.sum = list, sum.String()
	notify := c.skills.notify
	c.skills.mu.Unlock()
	if changed && notify != nil {
		notify()
	}
}

// remoteSkill makes the skill of one entry, whose files are read from the
// server when someone reads them.
func (c *Connector) remoteSkill(raw json.RawMessage) (toolkit.Skill, error) {
	var e skill.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		var named struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(raw, &named)
		return nil, fmt.Errorf("skill %.200q: %w", named.URI, err)
	}
	return skill.FromEntry(e, skill.Limits{}, func(ctx context.Context, uri string) ([]byte, error) {
		rc, err := c.readResource(ctx, nil, uri)
		return rc.Data, err
	})
}
