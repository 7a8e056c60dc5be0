// Package report renders what the checker found for people and scripts:
// bug reports with symbolic stacks (func, file:line, naming call sites for
// outer frames) as text and as a JSON-ready model. Every report ends with
// the command that replays it.
//
// A Trace is the full bug report of thesis §3.1.5: the bug, the
// exploration's counts, and the preemption trace (one Step per transition,
// labelled with the kind of PP that ended it), rendered as text
// (WriteText), as a self-contained HTML table with one column per thread
// (WriteHTML) and as JSON (WriteJSON). DumpDOM and CheckTraceDOM check the
// HTML as headless Chromium builds it.
package report

import (
	"fmt"
	"io"
	"strings"

	"landslide/emu/elfsym"
	"landslide/record"
)

// Frame is one symbolic stack frame.
type Frame struct {
	PC     uint64 `json:"pc"`
	Func   string `json:"func,omitempty"`
	Offset uint64 `json:"offset,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Text   string `json:"text"`
}

// Frames symbolises a stack: frame 0 is a PC, outer frames return
// addresses shown at their call site.
func Frames(syms *elfsym.Symbols, stack []uint64) []Frame {
	out := make([]Frame, 0, len(stack))
	for i, pc := range stack {
		f := syms.Describe(pc, i > 0)
		out = append(out, Frame{PC: f.PC, Func: f.Func, Offset: f.Offset, File: f.File, Line: f.Line, Text: f.String()})
	}
	return out
}

// Detail is a symbolised record.Detail.
type Detail struct {
	Title  string  `json:"title"`
	Thread int32   `json:"thread,omitempty"`
	Stack  []Frame `json:"stack,omitempty"`
	Text   string  `json:"text,omitempty"`
}

// Bug is a symbolised record.Bug.
type Bug struct {
	Kind    string   `json:"kind"`
	Message string   `json:"message"`
	Thread  int32    `json:"thread"`
	PC      uint64   `json:"pc"`
	Stack   []Frame  `json:"stack"`
	Details []Detail `json:"details,omitempty"`
}

// NewBug symbolises b.
func NewBug(b *record.Bug, syms *elfsym.Symbols) *Bug {
	if b == nil {
		return nil
	}
	out := &Bug{Kind: b.Kind.String(), Message: b.Message, Thread: int32(b.Thread), PC: b.PC, Stack: Frames(syms, b.Stack)}
	for _, d := range b.Details {
		out.Details = append(out.Details, Detail{Title: d.Title, Thread: int32(d.Thread), Stack: Frames(syms, d.Stack), Text: d.Text})
	}
	return out
}

// WriteText writes the bug as the terminal report.
func (b *Bug) WriteText(w io.Writer) {
	fmt.Fprintf(w, "A bug was found! [%s]\n", b.Kind)
	fmt.Fprintf(w, "%s\n", b.Message)
	if len(b.Stack) > 0 {
		fmt.Fprintf(w, "Current stack (thread %d):\n", b.Thread)
		writeFrames(w, b.Stack)
	}
	for _, d := range b.Details {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(d.Title))
		if d.Text != "" {
			fmt.Fprintf(w, "    %s\n", d.Text)
		}
		writeFrames(w, d.Stack)
	}
}

func writeFrames(w io.Writer, fs []Frame) {
	for _, f := range fs {
		fmt.Fprintf(w, "    %s\n", f.Text)
	}
}
