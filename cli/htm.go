package cli

import "github.com/spf13/pflag"

// htmFlags are the transactional-memory modes (thesis §6.2.1). Programs
// that use htm.h always get the basics (the thesis's -X): PPs at _xbegin
// and _xend, RETRY aborts injected at each _xbegin, transactions as one
// global lock in the race analysis.
type htmFlags struct {
	abortCodes bool
	stm        bool
	retrySets  bool
	weak       bool
}

// any reports whether a mode is set: they are the dpor strategy's, which
// the default strategy then is.
func (h *htmFlags) any() bool { return h.abortCodes || h.stm || h.retrySets || h.weak }

func (h *htmFlags) register(fl *pflag.FlagSet) {
	fl.BoolVarP(&h.abortCodes, "abort-codes", "A", false, "transactions abort with distinct statuses: CONFLICT after a conflicting access, EXPLICIT from _xabort, CAPACITY from a system call (the thesis's -A)")
	fl.BoolVarP(&h.stm, "stm", "S", false, "STM semantics: no RETRY aborts, only conflict aborts (needs --abort-codes; the thesis's -S)")
	fl.BoolVarP(&h.retrySets, "retry-sets", "R", false, "retry-set reduction: a reordering keeps the _xbegin results that made its race (not with --abort-codes; the thesis's -R; not exact: it can miss final states; explores more than the default on some programs)")
	fl.BoolVarP(&h.weak, "weak-atomicity", "W", false, "weak atomicity: transactions are atomic only with respect to each other, with PPs and system calls inside them (needs --stm; the thesis's -W)")
}
