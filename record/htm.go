package record

import (
	"fmt"
	"strings"
)

// _xbegin's results, as GCC's RTM intrinsics define them (sdk's htm.h
// has the same values): XbeginStarted, or an abort status whose bits say
// why, with _xabort's argument in bits 24-31.
const (
	XbeginStarted  = 0xFFFFFFFF
	XabortExplicit = 1 << 0
	XabortRetry    = 1 << 1
	XabortConflict = 1 << 2
	XabortCapacity = 1 << 3
	XabortDebug    = 1 << 4
	XabortNested   = 1 << 5
)

// AbortText names an abort status as htm.h's bits do: "RETRY",
// "CONFLICT", "EXPLICIT 0x2a" (with _xabort's code).
func AbortText(status uint64) string {
	var parts []string
	for _, b := range []struct {
		bit  uint64
		name string
	}{{XabortExplicit, "EXPLICIT"}, {XabortRetry, "RETRY"}, {XabortConflict, "CONFLICT"},
		{XabortCapacity, "CAPACITY"}, {XabortDebug, "DEBUG"}, {XabortNested, "NESTED"}} {
		if status&b.bit != 0 {
			parts = append(parts, b.name)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("no reason given (status %#x)", status)
	}
	s := strings.Join(parts, "|")
	if status&XabortExplicit != 0 {
		s += fmt.Sprintf(" %#02x", status>>24&0xFF)
	}
	return s
}

// TxnLockAddr is the location a weak transaction (kernel.HTMConfig.Weak)
// writes, atomically, where it begins: transactions then conflict with
// each other as the acquisitions of one lock do, so DPOR reorders them.
// It lies outside every guest address space.
const TxnLockAddr uint64 = 1 << 63

// SelfAbort reports whether the transition's transaction aborted itself
// (_xabort, a system call), and with which status: it began
// (SyncTxnBegin) and then aborted (SyncTxnAbort), rather than committing
// or being aborted at its _xbegin (an injected status has no
// SyncTxnBegin).
func (tr *Transition) SelfAbort() (status uint64, ok bool) {
	begun := false
	for _, e := range tr.Sync {
		switch e.Kind {
		case SyncTxnBegin:
			begun = true
		case SyncTxnAbort:
			if begun {
				return e.Arg, true
			}
		}
	}
	return 0, false
}
