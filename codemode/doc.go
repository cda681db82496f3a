// Package codemode lets a model write a short program against a toolkit
// instead of calling its tools one at a time: the program calls the tools
// as async functions, filters and joins their results, and returns only
// what the model needs, so that intermediate results never enter the
// model's context and a multi-step task costs one round trip.
//
//	m, err := codemode.New(tk, codemode.Config{Worker: &codemode.Worker{}})
//	...
//	err = tk.AddTool(m.Tools()...) // run_code and declare_tools
//
// The model reads the TypeScript declarations of the tools it needs
// (declare_tools, by name or by a query; see Declare) and sends a script
// to run_code:
//
//	const {files} = await tools.list_files({dir: "/logs"});
//	const errors = [];
//	for (const f of files.filter(f => f.name.endsWith(".log")))
//	  errors.push(...(await tools.read_file({name: f.name})).split("\n").filter(l => l.includes("ERROR")));
//	return {count: errors.length, first: errors.slice(0, 5)};
//
// Both faces serve the two tools like any builtin: the server face to
// its clients (the gateway's code_mode key; with tool search they are
// listed beside its meta-tools, so a client searches, declares, then
// runs code), package model and every adapter to an application's model
// (offer only them with [Filter]).
//
// # Calls
//
// tools.NAME(args) calls the tool whose model name (package model's
// Namer) is NAME through the toolkit's Call, with the context of the
// run_code call: the caller's principal and session, the policy (allow,
// deny, ask), pinned definitions, rate limits, cancellation; each inner
// call is one audit record whose parent attribute is the run_code call's
// number. A call that fails — denied, rate limited, failed — rejects with
// an Error named "ToolError" with .tool and .outcome (the toolkit's
// Outcome values), which the script may catch.
//
// # Bounds
//
// Every script has a VM of its own (github.com/dop251/goja): ECMAScript
// and the globals tools and console, no modules, timers, files, network
// or process. [Limits] bound its wall time (an interrupt no try/catch
// holds), its tool calls, its call stack, its result, what it receives
// from one call, its console output and its source. goja cannot bound its
// heap, and some builtins ("x".repeat(n)) allocate without being
// interruptible; so a [Worker] runs each script in a child process: the
// application's program re-executed (it calls [ServeWorker] first in
// main), whose heap is watched and held to Limits.Memory, whose address
// space and CPU time the OS limits (RLIMIT_AS, RLIMIT_CPU on Linux), and
// whose tool calls come back over a pipe to run in the parent. A script
// that breaks a bound fails alone with an error wrapping [ErrBound]; one
// that throws, with [ErrScript]; both are a *[ScriptError] with the
// script's line and column, and its console output. Without a Worker
// scripts run in process, start faster, and nothing but their time
// bounds their memory (a script stuck in such a builtin is given up on
// past its time, its goroutine left to end when the builtin returns):
// use that only for scripts you trust.
//
// # Results
//
// run_code answers with the script's return value: a string as text, any
// other value as JSON (the toolkit serves it as structured content); with
// console output, an object {"result": ..., "console": "..."}.
package codemode
