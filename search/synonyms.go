package search

import "strings"

// synonymGroups are words a user says for the same thing a tool's name or
// description says another way. Each group is a concept: a word of a
// group, in a query or in a tool's text, also stands for the group, so
// that "remove the folder" finds delete_directory. A word may belong to
// several groups. The words are stemmed when the table is built; keep them
// plain English.
var synonymGroups = [][]string{
	// Actions.
	{"delete", "remove", "erase", "drop", "destroy", "purge", "unlink", "trash", "rm", "del", "forget", "uninstall"},
	{"get", "fetch", "retrieve", "read", "obtain", "load", "show", "view", "display", "see", "open", "lookup"},
	{"create", "add", "new", "make", "insert", "generate", "build", "init", "initialize", "start"},
	{"list", "enumerate", "ls", "browse", "catalog", "inventory"},
	{"search", "find", "query", "lookup", "locate", "seek", "grep", "discover"},
	{"update", "edit", "modify", "change", "patch", "alter", "set", "replace", "rewrite", "amend"},
	{"write", "save", "store", "put", "persist", "record", "dump"},
	{"run", "execute", "exec", "invoke", "launch", "call", "trigger", "perform", "start"},
	{"stop", "kill", "terminate", "halt", "cancel", "end", "abort", "quit", "close", "shutdown"},
	{"move", "rename", "mv", "relocate", "transfer"},
	{"copy", "duplicate", "clone", "cp", "replicate", "fork"},
	{"send", "post", "publish", "submit", "notify", "message", "tell"},
	{"reply", "respond", "answer", "comment"},
	{"navigate", "visit", "go", "goto", "open", "browse", "load"},
	{"click", "press", "tap", "push"},
	{"type", "fill", "enter", "input", "write"},
	{"upload", "attach"},
	{"download", "export", "save"},
	{"compare", "diff", "difference", "changes"},
	{"describe", "info", "information", "detail", "details", "metadata", "inspect", "explain", "stat", "stats", "status"},
	{"count", "number", "total", "tally", "how many"},
	{"sum", "add", "plus", "total", "addition"},
	{"wait", "sleep", "pause", "delay"},
	{"scroll", "swipe"},
	{"resize", "dimension", "size", "width", "height"},
	{"restart", "reload", "refresh", "reboot", "rerun", "retry"},
	{"undo", "revert", "rollback", "reset", "restore"},
	{"validate", "check", "verify", "lint", "test"},
	{"connect", "login", "attach", "link"},
	{"disconnect", "logout", "detach"},
	{"analyze", "analyse", "audit", "diagnose", "investigate", "debug", "profile"},
	{"summarize", "summary", "digest", "overview"},
	{"translate", "convert", "transform", "turn"},
	{"compress", "zip", "gzip", "archive"},
	{"monitor", "watch", "track", "observe"},
	{"schedule", "plan", "cron", "recurring"},
	{"approve", "accept", "confirm", "ok"},
	{"status", "state", "condition", "health", "progress"},
	{"accessibility", "a11y", "aria", "screen reader"},
	{"multiple", "many", "several", "batch", "bulk", "simultaneously", "at once", "both"},
	{"reject", "dismiss", "decline", "deny"},

	// Things.
	{"file", "document", "doc"},
	{"directory", "folder", "dir", "path"},
	{"repository", "repo", "project", "codebase"},
	{"issue", "ticket", "bug", "problem", "incident", "defect"},
	{"pull request", "pr", "merge request", "mr", "pull", "merge"},
	{"user", "person", "people", "member", "account", "profile"},
	{"message", "msg", "chat", "post", "dm"},
	{"channel", "room", "conversation"},
	{"database", "db", "datastore", "sql", "postgres", "postgresql", "mysql", "sqlite", "mongo", "mongodb"},
	{"table", "collection", "relation"},
	{"record", "row", "entry", "item", "document"},
	{"image", "picture", "photo", "screenshot", "png", "jpg", "jpeg", "logo", "icon"},
	{"video", "screencast", "recording", "movie"},
	{"place", "location", "address", "venue", "spot", "nearby", "near"},
	{"route", "directions", "drive", "driving", "walk", "travel", "way"},
	{"coordinate", "latitude", "longitude", "lat", "lng", "gps", "geocode"},
	{"web", "internet", "online", "website", "site", "google"},
	{"url", "link", "href", "address", "website", "page"},
	{"page", "webpage", "tab", "site"},
	{"error", "exception", "crash", "failure", "fault", "bug"},
	{"log", "logs", "output", "console", "trace"},
	{"process", "task", "job", "command", "program", "pid"},
	{"terminal", "shell", "console", "session", "repl", "cli"},
	{"environment", "env", "variable", "config", "configuration", "setting", "settings", "option", "preference"},
	{"commit", "revision", "changeset", "sha"},
	{"history", "log", "past", "previous", "recent", "earlier"},
	{"branch", "ref", "head"},
	{"tag", "label", "release", "version"},
	{"text", "content", "contents", "body", "string"},
	{"note", "observation", "fact", "memo"},
	{"memory", "knowledge", "remember", "memorize", "recall", "graph"},
	{"entity", "node", "object", "thing"},
	{"element", "selector", "button", "field", "link", "widget", "control"},
	{"form", "field", "input", "signup", "login"},
	{"dropdown", "select", "option", "choice", "combobox"},
	{"dialog", "alert", "popup", "modal", "prompt", "confirm"},
	{"key", "keyboard", "keystroke", "hotkey"},
	{"script", "javascript", "js", "code", "snippet", "expression"},
	{"network", "request", "http", "traffic", "xhr", "fetch"},
	{"performance", "speed", "slow", "fast", "latency", "vitals"},
	{"research", "investigate", "study", "report", "deep"},
	{"paper", "article", "publication", "arxiv", "citation", "cite", "academic"},
	{"documentation", "docs", "manual", "reference", "api"},
	{"library", "package", "framework", "module", "dependency", "sdk"},
	{"cluster", "kubernetes", "k8s", "kubectl"},
	{"pod", "container"},
	{"deployment", "deploy", "rollout", "release"},
	{"pipeline", "build", "workflow", "ci"},
	{"artifact", "output", "build"},
	{"credit", "usage", "quota", "balance", "billing"},
	{"schema", "structure", "fields", "shape", "columns"},
	{"thread", "replies", "conversation"},
	{"reaction", "emoji", "react"},
	{"step", "think", "reason", "reflect", "thought"},
	{"tree", "hierarchy", "structure", "recursive"},
	{"permission", "allowed", "access", "authorized", "role"},
	{"sql", "select", "query"},
	{"elevation", "altitude", "height", "sea level"},
	{"distance", "far", "travel time", "duration", "eta"},
	{"crawl", "spider", "scrape"},
	{"scrape", "extract", "parse", "crawl"},
	{"map", "sitemap", "urls"},
	{"workspace", "team", "organization", "org"},
}

// concepts maps a stemmed word to the concepts (synonym groups) it
// belongs to, as index terms: "~" and the stem of the group's first word.
// Phrases of several words are keyed by their stems joined with a space.
var concepts = buildConcepts(synonymGroups)

// conceptPrefix marks a concept term; no word of text starts with it.
const conceptPrefix = "~"

func buildConcepts(groups [][]string) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		id := conceptPrefix + phraseKey(g[0])
		for _, w := range g {
			k := phraseKey(w)
			if !containsString(out[k], id) {
				out[k] = append(out[k], id)
			}
		}
	}
	return out
}

// phraseKey returns the stems of the words of a phrase, joined by spaces.
func phraseKey(p string) string {
	fields := strings.Fields(p)
	for i, f := range fields {
		fields[i] = stem(f)
	}
	return strings.Join(fields, " ")
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
