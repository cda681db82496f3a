package main

import (
	"fmt"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/codemode"
)

// CodeMode serves code mode (package codemode): clients get the tools
// run_code, which runs a JavaScript program that calls the gateway's
// tools as functions (each call through the toolkit's Call, under the
// client's principal, the policy and the audit), and declare_tools, which
// gives the TypeScript declarations of the tools a program needs. With
// tool_search, both are listed beside its meta-tools. Scripts run in a
// worker process (the gateway itself, re-executed) whose memory the OS
// bounds, unless in_process is set.
type CodeMode struct {
	// Timeout bounds a script's wall time (default 30s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxToolCalls bounds the tool calls of one script (default 200).
	MaxToolCalls int `yaml:"max_tool_calls"`
	// MaxParallelCalls bounds the calls of one script that run at once,
	// those it awaits together (default 4).
	MaxParallelCalls int `yaml:"max_parallel_calls"`
	// MaxOutput bounds a script's result in bytes (default 256 KiB).
	MaxOutput int `yaml:"max_output"`
	// MemoryMB bounds the heap of a script's worker process, in MiB
	// (default 256).
	MemoryMB int `yaml:"memory_mb"`
	// InProcess runs scripts in the gateway's own process: each starts
	// faster, and nothing but its timeout bounds its memory.
	InProcess bool `yaml:"in_process"`
	// WarmWorkers bounds the worker processes started before the scripts
	// that will run in them (each runs one script), per principal: by
	// default one waits, for the principal whose script ended last.
	WarmWorkers *WarmWorkers `yaml:"warm_workers"`
}

// WarmWorkers is code_mode.warm_workers: the started workers that wait
// for a principal's next script (codemode.Warm).
type WarmWorkers struct {
	// Max bounds the workers that wait, in all (default 1; 0 keeps none:
	// each script waits for its worker's start).
	Max *int `yaml:"max"`
	// PerPrincipal bounds those that wait for one principal (default 1).
	PerPrincipal int `yaml:"per_principal"`
	// Idle is how long a worker waits before it is stopped (default 5m).
	Idle time.Duration `yaml:"idle"`
}

// warm returns the codemode.Warm of ww (nil: the default).
func (ww *WarmWorkers) warm() codemode.Warm {
	w := codemode.Warm{Max: 1}
	if ww == nil {
		return w
	}
	if ww.Max != nil {
		w.Max = *ww.Max
	}
	w.PerPrincipal, w.Idle = ww.PerPrincipal, ww.Idle
	return w
}

// Bounds of code_mode's fields.
const (
	maxCodeTimeout   = 10 * time.Minute
	maxCodeToolCalls = 100_000
	maxCodeParallel  = 64
	maxCodeOutput    = 64 << 20
	maxCodeMemoryMB  = 64 << 10
	maxWarmWorkers   = 256
	maxWarmIdle      = 24 * time.Hour
)

// checkCodeMode checks code_mode: every bound in range.
func (v *validator) checkCodeMode(cm *CodeMode) {
	if cm == nil {
		return
	}
	if cm.Timeout < 0 || cm.Timeout > maxCodeTimeout {
		v.fail(fmt.Sprintf("%v is out of range: use up to %v (or leave it out for %v)", cm.Timeout, maxCodeTimeout, codemode.DefaultTimeout), "code_mode", "timeout")
	}
	if cm.MaxToolCalls < 0 || cm.MaxToolCalls > maxCodeToolCalls {
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (or leave it out for %d)", cm.MaxToolCalls, maxCodeToolCalls, codemode.DefaultMaxToolCalls), "code_mode", "max_tool_calls")
	}
	if cm.MaxParallelCalls < 0 || cm.MaxParallelCalls > maxCodeParallel {
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (or leave it out for %d)", cm.MaxParallelCalls, maxCodeParallel, codemode.DefaultMaxParallelCalls), "code_mode", "max_parallel_calls")
	}
	if cm.MaxOutput < 0 || cm.MaxOutput > maxCodeOutput {
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d bytes (or leave it out for %d)", cm.MaxOutput, maxCodeOutput, codemode.DefaultMaxOutput), "code_mode", "max_output")
	}
	if cm.MemoryMB < 0 || cm.MemoryMB > maxCodeMemoryMB {
		v.fail(fmt.Sprintf("%d is out of range: use 16 to %d MiB (or leave it out for %d)", cm.MemoryMB, maxCodeMemoryMB, codemode.DefaultMemory>>20), "code_mode", "memory_mb")
	} else if cm.MemoryMB > 0 && cm.MemoryMB < 16 {
		v.fail(fmt.Sprintf("%d is too small: use 16 to %d MiB (or leave it out for %d)", cm.MemoryMB, maxCodeMemoryMB, codemode.DefaultMemory>>20), "code_mode", "memory_mb")
	}
	if cm.InProcess && cm.MemoryMB != 0 {
		v.warn("memory_mb bounds a worker process; with in_process it bounds nothing", "code_mode", "memory_mb")
	}
	if ww := cm.WarmWorkers; ww != nil {
		if ww.Max != nil && (*ww.Max < 0 || *ww.Max > maxWarmWorkers) {
			v.fail(fmt.Sprintf("%d is out of range: use 0 to %d (or leave it out for 1)", *ww.Max, maxWarmWorkers), "code_mode", "warm_workers", "max")
		}
		if ww.PerPrincipal < 0 || ww.PerPrincipal > maxWarmWorkers {
			v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (or leave it out for 1)", ww.PerPrincipal, maxWarmWorkers), "code_mode", "warm_workers", "per_principal")
		}
		if ww.Idle < 0 || ww.Idle > maxWarmIdle {
			v.fail(fmt.Sprintf("%v is out of range: use up to %v (or leave it out for %v)", ww.Idle, maxWarmIdle, codemode.DefaultWarmIdle), "code_mode", "warm_workers", "idle")
		}
		if cm.InProcess {
			v.warn("warm_workers keeps worker processes; with in_process none runs", "code_mode", "warm_workers")
		}
	}
}

// String describes cm for comparing two configurations ("" when nil).
func (cm *CodeMode) String() string {
	if cm == nil {
		return ""
	}
	c := *cm
	c.WarmWorkers = nil
	return fmt.Sprintf("%+v warm_workers %+v", c, cm.WarmWorkers.warm())
}

// addCodeMode adds code mode's tools to tk as builtins; scripts call the
// tools by the names names gives (the names the gateway's clients see).
// In workers, started workers wait for the principals' next scripts
// (code_mode.warm_workers); closing the mode stops them.
func addCodeMode(tk *toolkit.Toolkit, cm *CodeMode, names codemode.Names) (*codemode.Mode, error) {
	cfg := codemode.Config{Names: names, Limits: codemode.Limits{
		Timeout:          cm.Timeout,
		MaxToolCalls:     cm.MaxToolCalls,
		MaxParallelCalls: cm.MaxParallelCalls,
		MaxOutput:        cm.MaxOutput,
		Memory:           int64(cm.MemoryMB) << 20,
	}}
	if !cm.InProcess {
		cfg.Worker = &codemode.Worker{Warm: cm.WarmWorkers.warm()}
	}
	m, err := codemode.New(tk, cfg)
	if err != nil {
		return nil, fmt.Errorf("code_mode: %w", err)
	}
	if err := tk.AddTool(m.Tools()...); err != nil {
		m.Close()
		return nil, fmt.Errorf("code_mode: %w", err)
	}
	return m, nil
}

// codeModeAlways are the tool_search patterns code mode adds: its tools
// are listed as themselves.
var codeModeAlways = []string{codemode.RunCodeName, codemode.DeclareToolsName}

// serverNames names the tools in scripts as the gateway's server
// offers them (qualified_names included), once it exists.
type serverNames struct{ g *gateway }

func (n serverNames) ExposedName(kind toolkit.ListType, key string) (string, bool) {
	if n.g.srv == nil {
		return "", false
	}
	return n.g.srv.ExposedName(kind, key)
}

func (n serverNames) ItemKey(kind toolkit.ListType, exposed string) (string, bool) {
	if n.g.srv == nil {
		return "", false
	}
	return n.g.srv.ItemKey(kind, exposed)
}
