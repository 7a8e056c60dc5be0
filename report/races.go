package report

import (
	"bufio"
	"fmt"
	"io"
	"landslide/emu/elfsym"
	"os"
	"strings"

	"landslide/race"
)

// Race is a data-race candidate as every report shows it (stdout, the
// .txt, .html and .json bug reports, landslide races): the racing pair,
// its classification and both accesses' whole stacks.
type Race struct {
	Addr uint64 `json:"addr"`
	// Data names the address: a global by name and offset ("count",
	// "acct+4"); empty where no symbol holds it (heap, stacks).
	Data              string     `json:"data,omitempty"`
	A                 RaceAccess `json:"a"`
	B                 RaceAccess `json:"b"`
	BothOrder         bool       `json:"both_order"`
	FirstInterleaving bool       `json:"first_interleaving"`
	Realloc           bool       `json:"free_re_malloc"`
	Count             int        `json:"count"`
}

// RaceAccess is one side of a race: the thread, the instruction and the
// stack at it (frame 0 is the access; an empty stack: not known).
type RaceAccess struct {
	Thread int32   `json:"thread"`
	PC     uint64  `json:"pc"`
	Write  bool    `json:"write"`
	Atomic bool    `json:"atomic"`
	Stack  []Frame `json:"stack"`
}

// NewRace is the report's view of candidate c with its accesses' stacks.
func NewRace(c *race.Candidate, stackA, stackB []Frame) Race {
	side := func(s race.Side, st []Frame) RaceAccess {
		return RaceAccess{Thread: int32(s.Thread), PC: s.PC, Write: s.Write, Atomic: s.Atomic, Stack: st}
	}
	return Race{Addr: c.A.Addr, A: side(c.A, stackA), B: side(c.B, stackB), BothOrder: c.BothOrder,
		FirstInterleaving: c.FirstInterleaving, Realloc: c.Realloc, Count: c.Count}
}

// Tags are the candidate's classification, as words.
func (r Race) Tags() []string {
	tags := []string{"single-order"}
	if r.BothOrder {
		tags[0] = "both-order"
	}
	if r.FirstInterleaving {
		tags = append(tags, "first interleaving")
	} else {
		tags = append(tags, "nondeterministic")
	}
	if r.Realloc {
		tags = append(tags, "free-re-malloc (likely false positive)")
	}
	return tags
}

// Line is the candidate's one-line summary.
func (r Race) Line() string {
	at := fmt.Sprintf("0x%x", r.Addr)
	if r.Data != "" {
		at += " (" + r.Data + ")"
	}
	return fmt.Sprintf("%s: %s vs %s [%s]", at, r.A.what(), r.B.what(), strings.Join(r.Tags(), ", "))
}

// DataName names a data address by the object symbol that holds it:
// "count", or "acct+4" inside it; "" where none does.
func DataName(syms interface {
	ObjectAt(addr uint64) (string, uint64, bool)
}, addr uint64) string {
	name, start, ok := syms.ObjectAt(addr)
	name = elfsym.Demangle(name)
	switch {
	case !ok || name == "":
		return ""
	case addr == start:
		return name
	}
	return fmt.Sprintf("%s+%d", name, addr-start)
}

func (a RaceAccess) what() string {
	k := "read"
	if a.Write {
		k = "write"
	}
	if a.Atomic {
		k = "atomic " + k
	}
	return fmt.Sprintf("thread %d %s at 0x%x", a.Thread, k, a.PC)
}

// WriteRaces writes the candidates as text, each with every frame of
// both stacks: what explore prints and what the .txt report holds.
func WriteRaces(w io.Writer, races []Race) {
	if len(races) == 0 {
		fmt.Fprintln(w, "Data-race candidates: none.")
		return
	}
	fmt.Fprintf(w, "Data-race candidates (%d):\n", len(races))
	for _, r := range races {
		fmt.Fprintf(w, "  %s\n", r.Line())
		for i, a := range []RaceAccess{r.A, r.B} {
			side := []string{"A", "B"}[i]
			if len(a.Stack) == 0 {
				fmt.Fprintf(w, "      %s: 0x%08x (stack not stored)\n", side, a.PC)
			}
			for k, fr := range a.Stack {
				if k == 0 {
					fmt.Fprintf(w, "      %s: %s\n", side, fr.Text)
				} else {
					fmt.Fprintf(w, "         %s\n", fr.Text)
				}
			}
		}
	}
}

// SourceLine is a line of a source file, for the HTML report's context.
type SourceLine struct {
	N    int
	Text string
	Hit  bool // the frame's own line
}

// sourceContext reads the lines around file:line (context lines each
// side) when the file is readable from the working directory, as the
// DWARF paths of programs built in this tree are; nil otherwise.
func sourceContext(cache map[string][]string, file string, line, context int) []SourceLine {
	if file == "" || line <= 0 {
		return nil
	}
	lines, ok := cache[file]
	if !ok {
		if f, err := os.Open(file); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() && len(lines) < 1<<16 {
				lines = append(lines, sc.Text())
			}
			f.Close()
		}
		cache[file] = lines
	}
	if line > len(lines) {
		return nil
	}
	var out []SourceLine
	for n := max(1, line-context); n <= min(len(lines), line+context); n++ {
		out = append(out, SourceLine{N: n, Text: lines[n-1], Hit: n == line})
	}
	return out
}
