package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmkit/toolkit/policy"
)

// pinsUsage is the usage of the pins command.
const pinsUsage = `usage:
  toolkit-gateway pins list --config FILE [--all]
  toolkit-gateway pins approve --config FILE (--all | KEY...)

list shows the tools whose definition changed since it was approved
(quarantined: not listed, calls refused), with what changed; --all shows
every pinned tool. approve accepts the changed definitions of the tools
named (namespace.tool) or, with --all, of every quarantined tool. A running
gateway applies approvals within a second, or when it gets SIGHUP.`

// pinsCommand runs "toolkit-gateway pins ...": it reads and changes the
// pins file of a configuration, which a running gateway watches and
// reads again when it changes (and on SIGHUP).
func pinsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "approve") {
		fmt.Fprintln(stderr, pinsUsage)
		return errUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("pins "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "the gateway's configuration file")
	all := fs.Bool("all", false, "list: every pinned tool; approve: every quarantined tool")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError(err)
	}
	keys := fs.Args()
	if *file == "" || (sub == "list" && len(keys) > 0) || (sub == "approve" && (*all == (len(keys) > 0))) {
		fmt.Fprintln(stderr, pinsUsage)
		return errUsage
	}
	cfg, err := loadConfig(*file)
	if err != nil {
		return fmt.Errorf("configuration refused:\n%w", err)
	}
	state, closeState, err := newStateStore(cfg.State, nil)
	if err != nil {
		return err
	}
	defer closeState()
	store := pinStore(cfg, state)
	if store == nil {
		return fmt.Errorf("%s: no pins_file nor state: the gateway pins no tool definitions", *file)
	}
	eng, err := policy.New(ctx, policy.Config{}, policy.WithPins(store))
	if err != nil {
		return err
	}
	if sub == "list" {
		writePins(stdout, eng.Pins(), *all)
		return nil
	}
	if *all {
		for _, p := range quarantinedPins(eng.Pins()) {
			keys = append(keys, p.Key)
		}
		if len(keys) == 0 {
			fmt.Fprintln(stdout, "nothing waits for approval")
			return nil
		}
	}
	byKey := map[string]policy.Pin{}
	for _, p := range eng.Pins() {
		byKey[p.Key] = p
	}
	var errs []error
	for _, k := range keys {
		changes := byKey[k].Changes()
		if err := eng.Approve(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "approved %s (%s)\n", k, fieldList(changes))
	}
	if len(errs) < len(keys) {
		fmt.Fprintln(stdout, "a running gateway applies it within a second")
	}
	return errors.Join(errs...)
}

// writePins lists pins for people: the quarantined ones, with what
// changed, and with all the approved ones too.
func writePins(w io.Writer, pins []policy.Pin, all bool) {
	shown := 0
	for _, p := range pins {
		if !p.Quarantined() {
			if all {
				fmt.Fprintf(w, "%s\tapproved\tseen %s\n", p.Key, p.Approved.Seen.Format(time.RFC3339))
				shown++
			}
			continue
		}
		shown++
		fmt.Fprintf(w, "%s\tquarantined\tsince %s\tchanged: %s\n", p.Key, p.Pending.Seen.Format(time.RFC3339), fieldList(p.Changes()))
		if p.RenamedFrom != "" {
			fmt.Fprintf(w, "  the definition quarantined as %s, under a new name\n", p.RenamedFrom)
		}
		for _, c := range p.Changes() {
			fmt.Fprintf(w, "  %s: %q -> %q\n", c.Field, c.Before, c.After)
		}
	}
	if shown == 0 {
		if all {
			fmt.Fprintln(w, "no tool is pinned")
		} else {
			fmt.Fprintln(w, "nothing waits for approval")
		}
	}
}

// fieldList names the fields of changes.
func fieldList(changes []policy.FieldChange) string {
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Field
	}
	return strings.Join(names, ", ")
}
