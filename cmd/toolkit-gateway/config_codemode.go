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
}

// Bounds of code_mode's fields.
const (
	maxCodeTimeout   = 10 * time.Minute
	maxCodeToolCalls = 100_000
	maxCodeParallel  = 64
	maxCodeOutput    = 64 << 20
	maxCodeMemoryMB  = 64 << 10
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
}

// String describes cm for comparing two configurations ("" when nil).
func (cm *CodeMode) String() string {
	if cm == nil {
		return ""
	}
	return fmt.Sprintf("%+v", *cm)
}

// addCodeMode adds code mode's tools to tk as builtins. In a worker, one
// started worker waits for the next script; closing the mode stops it.
func addCodeMode(tk *toolkit.Toolkit, cm *CodeMode) (*codemode.Mode, error) {
	cfg := codemode.Config{Limits: codemode.Limits{
		Timeout:          cm.Timeout,
		MaxToolCalls:     cm.MaxToolCalls,
		MaxParallelCalls: cm.MaxParallelCalls,
		MaxOutput:        cm.MaxOutput,
		Memory:           int64(cm.MemoryMB) << 20,
	}}
	if !cm.InProcess {
		cfg.Worker = &codemode.Worker{Warm: 1}
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
