package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"landslide/check"
)

// ExitKilled is the exit code of a second interrupt, which exits at once.
const ExitKilled = 130

// interruptContext is the context of a long check: the first SIGINT or
// SIGTERM cancels it (the check stops after its current interleaving,
// commits, says where it stopped and how to resume, and exits 3); a
// second one exits at once (the store is crash-safe: it keeps its last
// commit). stop releases the signals.
func interruptContext(cmd *cobra.Command) (context.Context, func()) {
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	stderr := cmd.ErrOrStderr()
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "landslide: %v: stopping (after the current interleaving, or inside it if it is long) and committing (again to exit at once)\n", sig)
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "landslide: %v again: exiting now; the store keeps its last commit\n", sig)
			os.Exit(ExitKilled)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// exitCode is the exit code of a check's outcome.
func exitCode(o check.Outcome) int {
	switch o {
	case check.Bug:
		return ExitBug
	case check.Verified, check.NoBug:
		return ExitOK
	}
	return ExitBudget // bounded, budget, interrupted, a checker limit
}

// checkErr is a failed check: a store failure (said as storeErr says
// it), or bad input, exit 2.
func checkErr(path string, err error) error {
	var se *check.StoreError
	if errors.As(err, &se) {
		return storeErr(se.Dir, se.Err)
	}
	return jobErr(path, err)
}
