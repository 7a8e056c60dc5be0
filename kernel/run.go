package kernel

import (
	"errors"

	"landslide/record"
	"landslide/schedule"
)

// Outcome summarises one execution.
type Outcome struct {
	Stdout       []byte
	ExitStatus   int
	Bug          *record.Bug // nil: no bug
	Budget       bool        // the instruction budget ran out first
	Instructions uint64
	PPs          int
	Schedule     []record.Choice
	Transitions  []*record.Transition
	Hash         [32]byte // record.Hash of the transitions
	Leaks        []record.Detail
	Diagnostics  []string
}

// Play runs the machine to its end under ch. Errors are the chooser's (an
// impossible scripted choice); a guest bug or a spent budget is in the
// Outcome.
func (k *Kernel) Play(ch schedule.Chooser) (*Outcome, error) {
	choices, trs, err := schedule.Play(k, ch)
	o := &Outcome{
		Stdout: k.Output(), ExitStatus: k.st.status, Bug: k.st.bug,
		Instructions: k.cpu.Instret, PPs: k.st.pps, Schedule: choices,
		Transitions: trs, Hash: record.Hash(trs), Diagnostics: k.st.diag,
	}
	if errors.Is(err, ErrBudget) {
		o.Budget, err = true, nil
	}
	if k.st.ended && k.st.bug == nil {
		o.Leaks = k.Leaks()
	}
	return o, err
}

// RunELF loads image and runs it under the default schedule.
func RunELF(image []byte, cfg Config) (*Outcome, error) {
	k, err := New(image, cfg)
	if err != nil {
		return nil, err
	}
	return k.Play(schedule.Default{})
}
