package main

import (
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ptxprop/ptxprop/faildb"
)

// faildbCommand lists and prunes a failure database (-ptxprop.faildb).
var faildbCommand = &command{name: "faildb", synopsis: "list DIR | prune -passed N DIR",
	short: "list a failure database's entries, or prune those that have passed N runs",
	long: `Faildb reads the failure database a run kept (-ptxprop.faildb=DIR, package
faildb: one rapid fail file per counterexample, replayed first by every
later run).

  list DIR             one line per entry: prediction, binding or kernels,
                       contract run, first seen, last failed, the runs that
                       replayed it and passed since, and the entry's file
  prune -passed N DIR  remove the entries that have passed N runs or more
                       since they last failed, and list them

A corrupt entry is listed as an error and left in place.
Exit status 0 on success, 1 when an entry is corrupt or cannot be
removed, 2 on bad usage.`,
	setup: faildbCmd}

func faildbCmd(fs *flag.FlagSet) func(e *env, args []string) error {
	passed := fs.Int("passed", 0, "prune: remove entries that have passed this many runs since they last failed (required, at least 1)")
	return func(e *env, args []string) error {
		c := lookup("faildb")
		if len(args) != 2 {
			return usageErr(c, "faildb takes list DIR or prune -passed N DIR")
		}
		db := faildb.DB{Dir: args[1]}
		var (
			es   []faildb.Entry
			errs []error
		)
		switch args[0] {
		case "list":
			es, errs = db.List()
		case "prune":
			if *passed < 1 {
				return usageErr(c, "faildb prune needs -passed N, N at least 1")
			}
			es, errs = db.Prune(*passed)
			fmt.Fprintf(e.stdout, "%d entries pruned (passed %d runs or more since they last failed)\n", len(es), *passed)
		default:
			return usageErr(c, "faildb: unknown command %s (list or prune)", quoteArg(args[0]))
		}
		printEntries(e, es)
		for _, err := range errs {
			fmt.Fprintln(e.stderr, "ptxprop:", err)
		}
		if len(errs) > 0 {
			return &exitError{exitFinding, fmt.Errorf("faildb: %d entries could not be read or removed", len(errs))}
		}
		return nil
	}
}

// printEntries writes one line per entry.
func printEntries(e *env, es []faildb.Entry) {
	if len(es) == 0 {
		return
	}
	w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PREDICTION\tON\tRUN\tFIRST SEEN\tLAST FAILED\tPASSED SINCE\tENTRY")
	for _, x := range es {
		on := x.Binding
		if on == "" {
			on = strings.Join(x.Kernels, ",")
		}
		if on == "" {
			on = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", x.Prediction, on, x.Run,
			x.FirstSeen.Format(time.RFC3339), x.LastFailed.Format(time.RFC3339), x.Passed, x.Path)
	}
	w.Flush()
}
