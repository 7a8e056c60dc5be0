package isatest

import (
	"fmt"

	"landslide/kernel"
)

// emuResult is what one run under our emulator produced.
type emuResult struct {
	stdout []byte
	exit   int
	bug    string // "" when no bug; otherwise the bug's kind name
	report string // the bug's full description, for messages
	budget bool   // the instruction budget ran out
	instrs uint64
}

// runEmulator runs an ELF image under our emulator with the default
// configuration. It is the only place that depends on the kernel's API:
// kernel.RunELF(image, kernel.Config{}) returning an Outcome with Stdout,
// ExitStatus, Bug (nil or a value with Kind and String()), Budget and
// Instructions.
func runEmulator(image []byte) (*emuResult, error) {
	o, err := kernel.RunELF(image, kernel.Config{})
	if err != nil {
		return nil, err
	}
	r := &emuResult{
		stdout: o.Stdout,
		exit:   o.ExitStatus,
		budget: o.Budget,
		instrs: o.Instructions,
	}
	if o.Bug != nil {
		r.bug = fmt.Sprint(o.Bug.Kind)
		r.report = o.Bug.String()
	}
	return r, nil
}
