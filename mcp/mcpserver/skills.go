package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/policyctx"
	"github.com/llmkit/toolkit/skill"
)

// The server serves the toolkit's skills by the MCP skills extension
// (SEP-2640), which the go-sdk has no API for: skills/list, skills/get and
// resources/directory/read are custom methods, and the skill files are
// read with resources/read, which skillsMiddleware answers for skill://
// URIs. The server declares the extension (with directoryRead) while the
// toolkit has a skill the client may see. Each skill is served at
// skill://<namespace>/<path>, the namespace first as tools are qualified,
// so skills of two sources never collide and a URI names its source. A
// read goes through Toolkit.ReadSkill: the policy and the audit see it.

// Methods of the skills extension.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// skillsPageSize is the number of skills a skills/list page holds.
const skillsPageSize = 100

// directoryType is the MIME type of a directory resource.
const directoryType = "inode/directory"

// listSkillsParams are the parameters of skills/list.
type listSkillsParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// listSkillsResult is the answer of skills/list.
type listSkillsResult struct {
	sdk.ResultBase
	ResultType string        `json:"resultType,omitempty"`
	Skills     []skill.Entry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	sdk.Cacheable
}

// getSkillParams are the parameters of skills/get.
type getSkillParams struct {
	sdk.ParamsBase
	URI string `json:"uri"`
}

// getSkillResult is the answer of skills/get.
type getSkillResult struct {
	sdk.ResultBase
	ResultType string      `json:"resultType,omitempty"`
	Skill      skill.Entry `json:"skill"`
	sdk.Cacheable
}

// readDirectoryParams are the parameters of resources/directory/read.
type readDirectoryParams struct {
	sdk.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// readDirectoryResult is the answer of resources/directory/read.
type readDirectoryResult struct {
	sdk.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Resources  []*sdk.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// addSkills registers the methods of the skills extension.
func (s *Server) addSkills() error {
	err := errors.Join(
		sdk.AddReceivingCustomMethod(s.server, methodSkillsList, s.listSkills),
		sdk.AddReceivingCustomMethod(s.server, methodSkillsGet, s.getSkill),
		sdk.AddReceivingCustomMethod(s.server, methodDirectoryRead, s.readDirectory),
	)
	s.server.AddReceivingMiddleware(s.skillsMiddleware)
	return err
}

// servedSkill is one skill as the server serves it.
type servedSkill struct {
	item toolkit.SkillItem
	root string // skill://<namespace>/<path>
}

// skillsFor returns the skills the principal of ctx sees, in toolkit
// order.
func (s *Server) skillsFor(ctx context.Context) []servedSkill {
	items := s.tk.ListSkills(ctx)
	out := make([]servedSkill, 0, len(items))
	for _, it := range items {
		if s.serves(it.Namespace) {
			out = append(out, servedSkill{item: it, root: skill.Root(it.Namespace + "/" + it.Skill.Path())})
		}
	}
	return out
}

// skillOf finds the skill whose file uri names, with the file's path in
// it ("" for the skill's root directory).
func skillOf(skills []servedSkill, uri string) (servedSkill, string, bool) {
	var best servedSkill
	file, found := "", false
	for _, sk := range skills {
		if uri != sk.root && !strings.HasPrefix(uri, sk.root+"/") {
			continue
		}
		if !found || len(sk.root) > len(best.root) {
			best, file, found = sk, strings.TrimPrefix(strings.TrimPrefix(uri, sk.root), "/"), true
		}
	}
	return best, file, found
}

// listSkills answers skills/list.
func (s *Server) listSkills(ctx context.Context, ss *sdk.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	skills := s.skillsFor(ctx)
	start := 0
	if p != nil && p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(skills) {
			return nil, invalidParams("skills/list: invalid cursor")
		}
		start = n
	}
	end := min(start+skillsPageSize, len(skills))
	res := &listSkillsResult{ResultType: "complete", Skills: make([]skill.Entry, 0, end-start), Cacheable: sdk.Cacheable{CacheScope: "private"}}
	for _, sk := range skills[start:end] {
		res.Skills = append(res.Skills, skill.EntryOf(sk.item.Skill, sk.root))
	}
	if end < len(skills) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

// getSkill answers skills/get.
func (s *Server) getSkill(ctx context.Context, ss *sdk.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil {
		return nil, invalidParams("skills/get: no uri")
	}
	sk, file, ok := skillOf(s.skillsFor(ctx), p.URI)
	if !ok || file != skill.FileName {
		return nil, invalidParams("No skill is served at %.300s", p.URI)
	}
	return &getSkillResult{ResultType: "complete", Skill: skill.EntryOf(sk.item.Skill, sk.root), Cacheable: sdk.Cacheable{CacheScope: "private"}}, nil
}

// readDirectory answers resources/directory/read for the directories of
// the skills: each skill's root, its subdirectories, and the namespace
// and path prefixes above the roots.
func (s *Server) readDirectory(ctx context.Context, ss *sdk.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
	if p == nil || !strings.HasPrefix(p.URI, skill.Scheme+"://") || strings.HasSuffix(p.URI, "/") {
		return nil, invalidParams("%.300s is not a directory resource", uriOf(p))
	}
	dir := p.URI
	children := map[string]*sdk.Resource{}
	add := func(uri, typ string) {
		rest, ok := strings.CutPrefix(uri, dir+"/")
		if !ok {
			return
		}
		name, _, deeper := strings.Cut(rest, "/")
		if deeper {
			typ = directoryType
		}
		if _, seen := children[name]; !seen {
			children[name] = &sdk.Resource{URI: dir + "/" + name, Name: name, MIMEType: typ}
		}
	}
	isDir := false
	for _, sk := range s.skillsFor(ctx) {
		if sk.root == dir || strings.HasPrefix(sk.root, dir+"/") || strings.HasPrefix(dir, sk.root+"/") {
			isDir = isDir || sk.root == dir || strings.HasPrefix(sk.root, dir+"/")
			for _, f := range sk.item.Skill.Files() {
				uri := sk.root + "/" + f.Path
				isDir = isDir || strings.HasPrefix(uri, dir+"/")
				add(uri, fileType(f.Path))
			}
		}
	}
	if !isDir {
		return nil, invalidParams("%.300s is not a directory resource", dir)
	}
	res := &readDirectoryResult{ResultType: "complete", Resources: slices.Collect(maps.Values(children))}
	slices.SortFunc(res.Resources, func(a, b *sdk.Resource) int { return strings.Compare(a.URI, b.URI) })
	return res, nil
}

// uriOf returns the URI of p, or "" for none.
func uriOf(p *readDirectoryParams) string {
	if p == nil {
		return ""
	}
	return p.URI
}

// fileType is the MIME type a skill file is served with.
func fileType(p string) string {
	if path.Base(p) == skill.FileName || path.Ext(p) == ".md" {
		return "text/markdown"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// skillsMiddleware answers resources/read for the files of the skills
// and declares the extension in initialize and server/discover answers
// while the client may see a skill.
func (s *Server) skillsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "resources/read":
			rr, ok := req.(*sdk.ReadResourceRequest)
			if !ok || rr.Params == nil || !strings.HasPrefix(rr.Params.URI, skill.Scheme+"://") {
				break
			}
			pctx := withPrincipal(ctx, req.GetExtra())
			sk, file, found := skillOf(s.skillsFor(pctx), rr.Params.URI)
			if !found || file == "" {
				break // not a skill's file: perhaps a resource of the toolkit
			}
			return s.readSkillFile(pctx, sk, file, rr.Params.URI)
		case "resources/list":
			res, err := next(ctx, method, req)
			if err == nil {
				s.visibleSkillResources(withPrincipal(ctx, req.GetExtra()), res)
			}
			return res, err
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err != nil || len(s.skillsFor(withPrincipal(ctx, req.GetExtra()))) == 0 {
				return res, err
			}
			addExtensions(res, map[string]any{skill.ExtensionID: map[string]any{"directoryRead": true}})
			return res, err
		}
		return next(ctx, method, req)
	}
}

// readSkillFile reads one file of a skill for resources/read.
func (s *Server) readSkillFile(ctx context.Context, sk servedSkill, file, uri string) (sdk.Result, error) {
	data, err := s.tk.ReadSkill(ctx, sk.item.Key(), file)
	switch {
	case errors.Is(err, toolkit.ErrNotFound):
		return nil, sdk.ResourceNotFoundError(uri)
	case err != nil:
		if we := refusal(err); we != nil {
			return nil, we
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%.300s: %v", uri, err)}
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: fileType(file)}
	if utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// skillListing is the SKILL.md resources the server registered with the
// SDK (by URI, with what they were registered with), so that clients
// list them in resources/list and hear of a change of the skills with
// notifications/resources/list_changed (or subscriptions/listen).
type skillListing struct {
	syncing sync.Mutex // serialises syncSkills
	mu      sync.Mutex // guards reg
	reg     map[string]skillRow
}

// skillRow is what a SKILL.md resource is registered with.
type skillRow struct{ name, description string }

// syncSkills registers the SKILL.md of every skill the toolkit holds as a
// resource, and unregisters those gone; the SDK announces the change.
// resources/list shows each principal those of the skills the policy lets
// it see (visibleSkillResources), and reads of them are answered by
// skillsMiddleware, through the policy.
func (s *Server) syncSkills() {
	s.skillRes.syncing.Lock()
	defer s.skillRes.syncing.Unlock()
	next := map[string]skillRow{}
	for _, sk := range s.skillsFor(policyctx.Unfiltered(context.Background())) {
		fm := sk.item.Skill.Frontmatter()
		next[sk.root+"/"+skill.FileName] = skillRow{fm.Name, fm.Description}
	}
	s.skillRes.mu.Lock()
	prev := s.skillRes.reg
	s.skillRes.reg = next
	s.skillRes.mu.Unlock()
	var gone []string
	for uri := range prev {
		if _, ok := next[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveResources(gone...)
	}
	for uri, r := range next {
		if old, ok := prev[uri]; ok && old == r {
			continue
		}
		s.server.AddResource(&sdk.Resource{URI: uri, Name: r.name, Description: r.description, MIMEType: "text/markdown"}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			// skillsMiddleware answers first; this runs only for a skill
			// gone meanwhile.
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		})
	}
}

// visibleSkillResources drops from a resources/list answer the SKILL.md
// resources of the skills the principal of ctx may not see.
func (s *Server) visibleSkillResources(ctx context.Context, res sdk.Result) {
	lr, ok := res.(*sdk.ListResourcesResult)
	if !ok || lr == nil || s.tk.Policy() == nil {
		return
	}
	seen := map[string]bool{}
	for _, sk := range s.skillsFor(ctx) {
		seen[sk.root+"/"+skill.FileName] = true
	}
	lr.Resources = slices.DeleteFunc(lr.Resources, func(r *sdk.Resource) bool {
		if r == nil || !strings.HasPrefix(r.URI, skill.Scheme+"://") {
			return false
		}
		s.skillRes.mu.Lock()
		_, ours := s.skillRes.reg[r.URI]
		s.skillRes.mu.Unlock()
		return ours && !seen[r.URI]
	})
}
