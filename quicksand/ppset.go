package quicksand

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Priority ranks a PP for choosing pending jobs: lower is more urgent
// (the source's codes; the empty set ranks 0).
type Priority uint8

// The priority codes.
const (
	PrioEmpty       Priority = 0
	PrioBothOrder   Priority = 1 // a data race seen ordered both ways (DR_CONFIRMED)
	PrioSingleOrder Priority = 2 // DR_SUSPECTED
	PrioLock        Priority = 4
	PrioUnlock      Priority = 8
	PrioOther       Priority = 0x40
	// An atomic conflict (race.Analyzer.Conflicts) ranks after every data
	// race, lock and unlock (beyond the thesis, which has none): jobs
	// with data-race PPs run first.
	PrioAtomicBoth   Priority = 0x50
	PrioAtomicSingle Priority = 0x60
	// PrioExplored ranks a job whose PPs completed jobs have all explored.
	PrioExplored Priority = 0x80
)

// PP is one preemption point Quicksand knows: the entry of a sync function
// (Func) or a data-race PP before one instruction (PC), which an atomic
// conflict rather than a data race may have given (Atomic).
type PP struct {
	Func     string   `msgpack:"func,omitempty"`
	PC       uint64   `msgpack:"pc,omitempty"`
	Where    string   `msgpack:"where,omitempty"` // a data-race PP's place, for the user
	Priority Priority `msgpack:"prio"`
	// Explored: a completed reproducing job's PP set held it.
	Explored bool `msgpack:"explored,omitempty"`
	// Deterministic: one of its races was seen on a first interleaving.
	Deterministic bool `msgpack:"det,omitempty"`
	// Atomic: only atomic conflicts named its instruction, no data race
	// (a PP at an instruction is one PP, whatever named it; a data race
	// there clears the flag).
	Atomic bool `msgpack:"atomic,omitempty"`
}

// IsRace tells a PP at an instruction (a data race's or an atomic
// conflict's) from a sync PP.
func (p *PP) IsRace() bool { return p.Func == "" }

// String is the PP as the progress report prints it.
func (p *PP) String() string {
	if !p.IsRace() {
		return "'" + p.Func + "'"
	}
	kind := "data race"
	if p.Atomic {
		kind = "atomic conflict"
	}
	// As explore lists a PP set: "data race at 0x00012ac0 in mutex_lock (mutex.c:39)".
	if p.Where != "" {
		return fmt.Sprintf("'%s at 0x%08x in %s'", kind, p.PC, p.Where)
	}
	return fmt.Sprintf("'%s at 0x%08x'", kind, p.PC)
}

// Set is a set of PPs, by their index in the registry, as a bitset.
type Set []uint64

// Of builds a set.
func Of(ids ...int) Set {
	var s Set
	for _, id := range ids {
		s = s.With(id)
	}
	return s
}

// Has reports whether id is in s.
func (s Set) Has(id int) bool {
	w := id / 64
	return w < len(s) && s[w]&(1<<(id%64)) != 0
}

// With returns s ∪ {id} (a new set).
func (s Set) With(id int) Set {
	w := id / 64
	out := make(Set, max(len(s), w+1))
	copy(out, s)
	out[w] |= 1 << (id % 64)
	return out
}

// Len is |s|.
func (s Set) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// SubsetOf reports s ⊆ o.
func (s Set) SubsetOf(o Set) bool {
	for i, w := range s {
		var ow uint64
		if i < len(o) {
			ow = o[i]
		}
		if w&^ow != 0 {
			return false
		}
	}
	return true
}

// ProperSubsetOf reports s ⊂ o.
func (s Set) ProperSubsetOf(o Set) bool { return s.SubsetOf(o) && !o.SubsetOf(s) }

// Equal reports s = o.
func (s Set) Equal(o Set) bool { return s.SubsetOf(o) && o.SubsetOf(s) }

// IDs lists the members in increasing order.
func (s Set) IDs() []int {
	var out []int
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << b
		}
	}
	return out
}

// Registry numbers the PPs Quicksand knows, in the order it learnt them.
type Registry struct {
	PPs []PP `msgpack:"pps"`

	// pcs indexes the PPs at instructions by PC, up to PPs[:indexed]
	// (empty after decoding: ID catches up).
	pcs     map[uint64]int
	indexed int
}

// Sync returns the ID of a sync PP, adding it if new.
func (r *Registry) Sync(fn string, prio Priority) int {
	for i := range r.PPs {
		if r.PPs[i].Func == fn {
			return i
		}
	}
	r.PPs = append(r.PPs, PP{Func: fn, Priority: prio})
	return len(r.PPs) - 1
}

// Race returns the ID of the PP at pc, for a data race or (atomic) an
// atomic conflict, and whether it is new. A known PP's priority can only
// rise (a smaller code), and a data race makes it a data-race PP.
func (r *Registry) Race(pc uint64, where string, prio Priority, atomic bool) (id int, isNew bool) {
	if i := r.ID(pc); i >= 0 {
		p := &r.PPs[i]
		p.Priority = min(p.Priority, prio)
		p.Atomic = p.Atomic && atomic
		return i, false
	}
	r.PPs = append(r.PPs, PP{PC: pc, Where: where, Priority: prio, Atomic: atomic})
	return len(r.PPs) - 1, true
}

// ID returns the ID of the PP at instruction pc, -1 if there is none.
func (r *Registry) ID(pc uint64) int {
	if r.pcs == nil || r.indexed > len(r.PPs) {
		r.pcs, r.indexed = map[uint64]int{}, 0
	}
	for ; r.indexed < len(r.PPs); r.indexed++ {
		if p := &r.PPs[r.indexed]; p.IsRace() {
			if _, ok := r.pcs[p.PC]; !ok {
				r.pcs[p.PC] = r.indexed
			}
		}
	}
	if i, ok := r.pcs[pc]; ok {
		return i
	}
	return -1
}

// All is the set of every known PP (the maximal state space's).
func (r *Registry) All() Set {
	var s Set
	for i := range r.PPs {
		s = s.With(i)
	}
	return s
}

// Describe prints a set as the thesis's progress report does:
// { 'mutex_lock' 'data race at 0x00102917 in f (f.c:3)' }, or { } for
// yields only.
func (r *Registry) Describe(s Set) string {
	var b strings.Builder
	b.WriteString("{ ")
	for _, id := range s.IDs() {
		b.WriteString(r.PPs[id].String())
		b.WriteByte(' ')
	}
	b.WriteString("}")
	return b.String()
}

// AtomicPCs lists the PCs of a set's PPs at atomic conflicts (sorted).
func (r *Registry) AtomicPCs(s Set) []uint64 {
	var pcs []uint64
	for _, id := range s.IDs() {
		if p := &r.PPs[id]; p.IsRace() && p.Atomic {
			pcs = append(pcs, p.PC)
		}
	}
	slices.Sort(pcs)
	return pcs
}

// Funcs and PCs split a set into sync function names and data-race PCs
// (sorted), the form a job's kernel configuration takes.
func (r *Registry) Funcs(s Set) (funcs []string, pcs []uint64) {
	funcs = []string{}
	for _, id := range s.IDs() {
		if p := &r.PPs[id]; p.IsRace() {
			pcs = append(pcs, p.PC)
		} else {
			funcs = append(funcs, p.Func)
		}
	}
	slices.Sort(pcs)
	return funcs, pcs
}
