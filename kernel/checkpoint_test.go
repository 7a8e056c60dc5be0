package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"landslide/fixtures"
	"landslide/record"
	"landslide/schedule"
)

// checkpointFixtures cover threads, sync frames, heap reuse and bugs,
// yield-loop blocking, spin loops, removed pages, deadlocks and exposed
// stacks.
var checkpointFixtures = []string{
	"ref/paradise_lost", "ref/mutex_test", "ref/thr_exit_join", "uaf_exit/thr_exit_join",
	"small/cond_predicate", "small/abba_deadlock", "ref/yield_loop_ok", "ref/realloc_race",
	"bugs/removed_pages", "bugs/double_free", "posix/sync_ok", "lockfree/treiber_aba",
	"spin/ttas", "posix/stack_share", "posix/svcomp_sections",
}

func fixtureImage(t testing.TB, name string) []byte {
	t.Helper()
	_, img, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func newKernel(t testing.TB, img []byte, cfg Config) *Kernel {
	t.Helper()
	k, err := New(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// stored is what a store would keep: a deep copy, sharing nothing with the
// machine that made it.
func stored(c *Checkpoint) *Checkpoint {
	s := &Checkpoint{State: slices.Clone(c.State), Pages: make([]Page, len(c.Pages))}
	for i, p := range c.Pages {
		s.Pages[i] = Page{Addr: p.Addr, Data: slices.Clone(p.Data)}
	}
	return s
}

// steps runs the choices and returns the transitions; it stops at the end
// or at an error (a spent budget).
func steps(k *Kernel, choices []record.Choice) ([]*record.Transition, error) {
	var trs []*record.Transition
	for _, c := range choices {
		if ended, _ := k.Ended(); ended {
			break
		}
		tr, err := k.Step(c)
		if tr != nil {
			trs = append(trs, tr)
		}
		if err != nil {
			return trs, err
		}
	}
	return trs, nil
}

// dumpState prints every field of st. Empty and nil slices print alike (a
// checkpoint does not keep the difference, which nothing observes), an
// empty free list like none, and the output by its bytes.
func dumpState(st state) string {
	bug, out := st.bug, st.out
	st.bug, st.out = nil, nil
	st.pthreadsMade = 0 // the copy-on-write generation, not the state
	st.heap = st.heap.clone()
	for size, l := range st.heap.free {
		if len(l) == 0 {
			delete(st.heap.free, size)
		}
	}
	// A spin window by value, without its copy-on-write generation.
	var wins []string
	ths := make([]thread, len(st.threads)) // by value, not by address
	for i, t := range st.threads {
		ths[i] = *t
	}
	st.threads = nil
	for i := range ths {
		ths[i].gen = 0 // which copy a thread is: not its value
		var states []string
		for n := ths[i].spin; n != nil && len(states) < spinStates; n = n.prev {
			states = append(states, fmt.Sprintf("%+v %+v", n.st, n.locs))
		}
		if len(states) > 0 {
			wins = append(wins, fmt.Sprintf("%d: %v", ths[i].tid, states))
		}
		ths[i].spin = nil
	}
	var o []byte
	if out != nil {
		o = make([]byte, out.size)
		for n := out; n != nil; n = n.prev {
			copy(o[n.size-len(n.data):], n.data)
		}
	}
	s := fmt.Sprintf("%+v\nthreads %+v\nspin windows %v\noutput %v %q", st, ths, wins, out != nil, o)
	if bug != nil {
		s += fmt.Sprintf("\nbug %+v", *bug)
	}
	return s
}

func sameCheckpoint(a, b *Checkpoint) bool {
	return bytes.Equal(a.State, b.State) && slices.EqualFunc(a.Pages, b.Pages, func(x, y Page) bool {
		return x.Addr == y.Addr && bytes.Equal(x.Data, y.Data)
	})
}

// features tallies what the round-trip snapshots held, so that the test
// fails if the fixtures stop exercising part of the state.
type features map[string]int

func (f features) note(st *state) {
	for _, t := range st.threads {
		if len(t.calls) > 0 {
			f["sync frames"]++
		}
		if t.hblocked && len(t.wait) > 0 {
			f["wait ranges"]++
		}
		if t.waitMutex != 0 {
			f["mutex waiter"]++
		}
		if t.yields > 0 {
			f["yield counter"]++
		}
		if t.atBreak {
			f["at breakpoint"]++
		}
		if t.state == stDescheduled {
			f["descheduled"]++
		}
		if t.state == stWaiting {
			f["pthread waiter"]++
		}
		if t.preSync {
			f["at a pthread call"]++
		}
		if t.lineup.open {
			f["inside a lineup call"]++
		}
		if t.spin != nil {
			f["spin window"]++
			if t.spin.prev != nil && len(t.spin.locs) > 0 {
				f["spin locations"]++
			}
		}
		if t.spinning {
			f["spinning"]++
		}
		if t.atomic > 0 {
			f["atomic section"]++
		}
		if len(t.atomicFrames) > 0 {
			f["atomic frames"]++
		}
	}
	if st.lineupCalls > 0 {
		f["lineup calls"]++
	}
	if len(st.pthreads) > 0 {
		f["pthread records"]++
	}
	h := &st.heap
	if len(h.quarantine) > 0 {
		f["quarantine"]++
	}
	n := 0
	for _, l := range h.free {
		if len(l) > 0 {
			n++
		}
	}
	if n > 0 {
		f["free list"]++
	}
	if n > 1 {
		f["free lists of two sizes"]++
	}
	for _, s := range h.slots {
		if s.gen > 1 {
			f["reused slot"]++
			break
		}
	}
	if len(st.removed) > 0 {
		f["removed region"]++
	}
	if st.out != nil && st.out.prev != nil {
		f["output list"]++
	}
	if st.bug != nil && len(st.bug.Details) > 0 {
		f["bug details"]++
	}
	if st.cur < 0 {
		f["no current thread"]++
	}
	if st.stuck > 0 {
		f["stuck"]++
	}
}

func bugText(b *record.Bug) string {
	if b == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%+v", *b)
}

// checkRoundTrip encodes sn (a snapshot of k), decodes it in a fresh kernel
// and checks that the decoded state equals sn's, then restores sn in k and
// the checkpoint in the fresh kernel and runs both with the choices rest
// (nil: the default choices, as k makes them). The machines must behave
// and end alike. It returns k's transitions.
func checkRoundTrip(t *testing.T, what string, img []byte, cfg Config, k *Kernel, sn *snapshot, rest []record.Choice) []*record.Transition {
	t.Helper()
	c, err := k.EncodeCheckpoint(sn)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	fresh := newKernel(t, img, cfg)
	d, err := fresh.DecodeCheckpoint(stored(c))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	dn := d.(*snapshot)
	if a, b := dumpState(dn.st), dumpState(sn.st); a != b {
		t.Fatalf("%s: decoded state differs:\n%s\nwant\n%s", what, a, b)
	}
	if dn.regs != sn.regs || dn.pc != sn.pc || dn.instret != sn.instret || dn.mem.Pages() != sn.mem.Pages() {
		t.Fatalf("%s: decoded CPU or memory size differs", what)
	}
	fresh.Restore(d)
	k.Restore(sn)
	var want []*record.Transition
	var werr error
	if rest == nil {
		rest, want, werr = schedule.Play(k, schedule.Default{})
	} else {
		want, werr = steps(k, rest)
	}
	got, gerr := steps(fresh, rest)
	if record.Hash(got) != record.Hash(want) || len(got) != len(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s: the restored checkpoint ran %d transitions (err %v), the snapshot %d (err %v), and they differ",
			what, len(got), gerr, len(want), werr)
	}
	if !bytes.Equal(fresh.Output(), k.Output()) || fresh.ExitStatus() != k.ExitStatus() ||
		fresh.Instructions() != k.Instructions() || fresh.PPs() != k.PPs() {
		t.Fatalf("%s: output, status, instructions or PPs differ: %q/%q %d/%d %d/%d %d/%d", what, fresh.Output(), k.Output(),
			fresh.ExitStatus(), k.ExitStatus(), fresh.Instructions(), k.Instructions(), fresh.PPs(), k.PPs())
	}
	ge, gb := fresh.Ended()
	we, wb := k.Ended()
	if ge != we || bugText(gb) != bugText(wb) {
		t.Fatalf("%s: ended %v with bug %s, want %v with %s", what, ge, bugText(gb), we, bugText(wb))
	}
	if fmt.Sprintf("%+v", fresh.Leaks()) != fmt.Sprintf("%+v", k.Leaks()) || !slices.Equal(fresh.st.diag, k.st.diag) {
		t.Fatalf("%s: leaks or diagnostics differ", what)
	}
	if a, b := dumpState(fresh.st), dumpState(k.st); a != b {
		t.Fatalf("%s: final states differ:\n%s\nwant\n%s", what, a, b)
	}
	return want
}

// snapshots plays ch on a new kernel and returns the schedule, the
// transitions and the kernel with its snapshot before each step and at
// the end.
func snapshots(t *testing.T, img []byte, cfg Config, ch schedule.Chooser) (*Outcome, *Kernel, []*snapshot) {
	t.Helper()
	ref := play(t, img, cfg, ch)
	k := newKernel(t, img, cfg)
	var snaps []*snapshot
	for _, c := range ref.Schedule {
		snaps = append(snaps, k.Snapshot().(*snapshot))
		if _, err := k.Step(c); err != nil && !errors.Is(err, ErrBudget) {
			t.Fatal(err)
		}
	}
	return ref, k, append(snaps, k.Snapshot().(*snapshot))
}

// TestCheckpointRoundTrip: a snapshot taken at any depth, encoded, decoded
// in a fresh kernel and restored there, continues exactly as the original
// machine restored from the snapshot in memory does: same transitions,
// output, exit status, bug, instruction count, leaks and diagnostics. The
// decoded state also equals the original field by field.
func TestCheckpointRoundTrip(t *testing.T) {
	seen := features{}
	for _, name := range checkpointFixtures {
		t.Run(name, func(t *testing.T) {
			img := fixtureImage(t, name)
			f, _ := fixtures.Lookup(name)
			choosers := []schedule.Chooser{schedule.Default{}, schedule.NewRandom(1), schedule.NewRandom(2)}
			if f.Schedule != "" {
				cs, err := schedule.Parse(f.Schedule)
				if err != nil {
					t.Fatal(err)
				}
				choosers = append(choosers, schedule.Script{Choices: cs})
			}
			for ci, ch := range choosers {
				// The thesis's loop heuristics keep state of their own
				// (yield counters, the stuck count): run half the
				// choosers under them.
				sv := strings.HasPrefix(name, "posix/svcomp")
				cfg := Config{ThesisHeuristics: ci%2 == 1, EveryAccess: strings.HasPrefix(name, "spin/") || sv, SVCOMP: sv}
				ref, k, snaps := snapshots(t, img, cfg, ch)
				// Every depth of short runs, about 12 of long ones, and the end.
				var depths []int
				for i := 0; i < len(snaps)-1; i += max(1, len(snaps)/12) {
					depths = append(depths, i)
				}
				for i := range snaps[:len(snaps)-1] {
					// And every state inside an SV-COMP atomic section.
					if slices.ContainsFunc(snaps[i].st.threads, func(t *thread) bool { return t.atomic > 0 }) && !slices.Contains(depths, i) {
						depths = append(depths, i)
					}
				}
				for _, i := range append(depths, len(snaps)-1) {
					seen.note(&snaps[i].st)
					what := fmt.Sprintf("chooser %d, depth %d/%d", ci, i, len(ref.Schedule))
					trs := checkRoundTrip(t, what, img, cfg, k, snaps[i], ref.Schedule[i:])
					if record.Hash(trs) != record.Hash(ref.Transitions[i:]) {
						t.Fatalf("%s: the in-memory snapshot no longer replays the reference", what)
					}
				}
			}
		})
	}
	t.Logf("state features round-tripped: %v", seen)
	for _, f := range []string{"sync frames", "mutex waiter", "yield counter", "at breakpoint", "descheduled",
		"quarantine", "free list", "reused slot", "removed region", "bug details", "no current thread", "stuck",
		"pthread waiter", "at a pthread call", "pthread records", "lineup calls", "spin window", "spin locations", "spinning",
		"atomic section", "atomic frames"} {
		if seen[f] == 0 {
			t.Errorf("no snapshot had %s: the fixtures no longer cover it", f)
		}
	}
}

// enrich gives k, through the kernel's own operations, state that the
// fixtures never reach: free lists of several sizes, a thread blocked on
// wait ranges, a sleeper, output in pieces, diagnostics, a new_pages region,
// a clock and kernel work.
func enrich(t testing.TB, k *Kernel) {
	t.Helper()
	var ptrs []uint64
	for i := range 80 {
		ptrs = append(ptrs, k.malloc(uint64(1+40*(i%5))))
	}
	for _, p := range ptrs[:75] {
		k.free(p, "free")
	}
	k.malloc(40) // from a free list
	k.appendOutput([]byte("one, "))
	k.appendOutput(nil)
	k.appendOutput([]byte("two\n"))
	k.st.diag = append(k.st.diag, "first diagnostic", "second")
	k.st.clock += 7
	k.charge(6400)
	if err := k.mem.Map(0x4000_0000, 2*PageSize, 3); err != nil {
		t.Fatal(err)
	}
	k.st.regions = append(k.st.regions, region{0x4000_0000, 2 * PageSize})
	var others []*thread
	for i := range k.st.threads {
		if i != k.st.cur && k.st.threads[i].state == stRunnable {
			others = append(others, k.own(i))
		}
	}
	if len(others) < 2 || k.st.ended {
		t.Fatalf("enrich needs two threads besides the current one")
	}
	k.block(others[0], []waitRange{{0x1000, 0x1008}, {HeapBase, HeapBase + 4}})
	others[0].yields, others[0].atomics = TooManyYields, 3
	others[0].spinning, others[0].spinPC = true, 0x10040
	others[1].state, others[1].wake = stSleeping, k.now()+3
	// A spin window of two states, the newer one after a transition that
	// touched two locations.
	old := &spinNode{depth: 1, st: spinState{pc: 0x10010, flags: spinAtBreak, stack: []byte{1, 2, 3}}}
	old.st.regs[2] = 0x7000
	others[1].spin = &spinNode{prev: old, depth: 2, st: spinState{pc: 0x10020, stack: []byte{1, 2, 4}},
		locs: []spinLoc{{addr: 0x1000, size: 4, val: 7}, {addr: HeapBase, size: 8, val: 1 << 40}}}
	others[1].spinDirty = true
}

// TestCheckpointEnriched: the round trip of state the fixtures do not
// reach (see enrich), continued under the default schedule.
func TestCheckpointEnriched(t *testing.T) {
	img := fixtureImage(t, "ref/paradise_lost")
	ref, k, snaps := snapshots(t, img, Config{}, schedule.Default{})
	// The first PP with three threads.
	i := slices.IndexFunc(snaps, func(s *snapshot) bool { return len(s.st.threads) >= 3 && s.st.cur >= 0 })
	if i < 0 {
		t.Fatal("no snapshot with three threads")
	}
	k.Restore(snaps[i])
	enrich(t, k)
	sn := k.Snapshot().(*snapshot)
	seen := features{}
	seen.note(&sn.st)
	for _, f := range []string{"wait ranges", "yield counter", "quarantine", "free lists of two sizes", "reused slot", "output list", "spin locations", "spinning"} {
		if seen[f] == 0 {
			t.Errorf("enrich did not make %s", f)
		}
	}
	if len(sn.st.diag) == 0 || len(sn.st.regions) == 0 || sn.st.clock == 0 || sn.st.work == 0 {
		t.Error("enrich did not add diagnostics, a region, a clock and work")
	}
	trs := checkRoundTrip(t, "enriched", img, Config{}, k, sn, nil)
	t.Logf("enriched at depth %d/%d: ran %d transitions to the end", i, len(ref.Schedule), len(trs))
}

// TestCheckpointDeterministic: the same state always encodes to the same
// bytes: the same snapshot twice, the snapshots of two machines that ran
// the same schedule, and a decoded snapshot encoded again.
func TestCheckpointDeterministic(t *testing.T) {
	for _, name := range []string{"ref/paradise_lost", "ref/realloc_race", "uaf_exit/thr_exit_join"} {
		img := fixtureImage(t, name)
		ref, k, snaps := snapshots(t, img, Config{}, schedule.NewRandom(5))
		_, k2, snaps2 := snapshots(t, img, Config{}, schedule.Script{Choices: ref.Schedule})
		// And an enriched state (free lists of several sizes: a map).
		if i := slices.IndexFunc(snaps, func(s *snapshot) bool { return len(s.st.threads) >= 3 && s.st.cur >= 0 }); i >= 0 {
			k.Restore(snaps[i])
			k2.Restore(snaps2[i])
			enrich(t, k)
			enrich(t, k2)
			snaps, snaps2 = append(snaps, k.Snapshot().(*snapshot)), append(snaps2, k2.Snapshot().(*snapshot))
		}
		for i := range snaps {
			a, err := k.EncodeCheckpoint(snaps[i])
			if err != nil {
				t.Fatal(err)
			}
			b, _ := k.EncodeCheckpoint(snaps[i])
			c, _ := k2.EncodeCheckpoint(snaps2[i])
			if !sameCheckpoint(a, b) || !sameCheckpoint(a, c) {
				t.Fatalf("%s depth %d: encodings of one state differ", name, i)
			}
			fresh := newKernel(t, img, Config{})
			d, err := fresh.DecodeCheckpoint(stored(a))
			if err != nil {
				t.Fatal(err)
			}
			e, _ := fresh.EncodeCheckpoint(d)
			if !sameCheckpoint(a, e) {
				t.Fatalf("%s depth %d: the decoded snapshot encodes differently", name, i)
			}
		}
	}
}

// smallConfig bounds what a decoded garbage state can cost to run.
var smallConfig = Config{MaxInstructions: 200_000, MaxThreads: 8}

// tryRun restores a decoded snapshot and runs up to 50 default steps: a
// checkpoint that decodes must be safe to run. It is also encoded again;
// that encoding must decode and encode to itself.
func tryRun(t *testing.T, k *Kernel, s record.Snapshot) {
	t.Helper()
	c, err := k.EncodeCheckpoint(s)
	if err != nil {
		t.Fatal(err)
	}
	d, err := k.DecodeCheckpoint(c)
	if err != nil {
		t.Fatalf("a decoded snapshot encodes to a rejected checkpoint: %v", err)
	}
	if c2, _ := k.EncodeCheckpoint(d); !sameCheckpoint(c, c2) {
		t.Fatal("re-encoding is not stable")
	}
	k.Restore(s)
	for range 50 {
		if ended, _ := k.Ended(); ended || len(k.Runnable()) == 0 {
			break
		}
		if _, err := k.Step(k.Default()); err != nil {
			break
		}
	}
}

// rejectSetup is paradise_lost under smallConfig: its kernel, snapshots
// at every depth, and the checkpoint of the middle one.
func rejectSetup(t *testing.T) (*Kernel, []*snapshot, *Checkpoint) {
	img := fixtureImage(t, "ref/paradise_lost")
	_, k, snaps := snapshots(t, img, smallConfig, schedule.NewRandom(1))
	c, err := k.EncodeCheckpoint(snaps[len(snaps)/2])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.DecodeCheckpoint(stored(c)); err != nil {
		t.Fatal(err)
	}
	return k, snaps, c
}

// TestCheckpointRejectsBytes: every truncation of State is an error, and a
// flipped byte gives an error or a state that is safe to run.
func TestCheckpointRejectsBytes(t *testing.T) {
	k, _, c := rejectSetup(t)
	for n := range len(c.State) {
		cc := stored(c)
		cc.State = cc.State[:n]
		if _, err := k.DecodeCheckpoint(cc); err == nil {
			t.Fatalf("State truncated to %d of %d bytes decodes", n, len(c.State))
		}
	}
	accepted := 0
	for off := range len(c.State) {
		for _, x := range []byte{0x01, 0x02, 0x40, 0x80, 0xff} {
			cc := stored(c)
			cc.State[off] ^= x
			if s, err := k.DecodeCheckpoint(cc); err == nil {
				accepted++
				tryRun(t, k, s)
			}
		}
	}
	t.Logf("%d bytes of State; %d of %d one-byte corruptions decode (and run safely)", len(c.State), accepted, 5*len(c.State))
	cc := stored(c)
	cc.State = append(cc.State, 0)
	if _, err := k.DecodeCheckpoint(cc); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("trailing byte: %v", err)
	}
	cc = stored(c)
	cc.State[0] = CheckpointVersion + 1
	if _, err := k.DecodeCheckpoint(cc); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("bad version: %v", err)
	}
	other := newKernel(t, fixtureImage(t, "ref/paradise_lost"), Config{MaxInstructions: smallConfig.MaxInstructions, MaxThreads: 9})
	if _, err := other.DecodeCheckpoint(stored(c)); err == nil || !strings.Contains(err.Error(), "Config") {
		t.Errorf("another Config: %v", err)
	}
	if _, err := k.DecodeCheckpoint(nil); err == nil {
		t.Error("nil checkpoint decodes")
	}
	if _, err := k.EncodeCheckpoint("not a snapshot"); err == nil {
		t.Error("a string encodes")
	}
}

// TestCheckpointRejectsPages: the pages must be exactly the mapped pages,
// ascending, aligned, inside the address space, of PageSize bytes.
func TestCheckpointRejectsPages(t *testing.T) {
	k, _, c := rejectSetup(t)
	data := slices.IndexFunc(c.Pages, func(p Page) bool { return p.Data != nil })
	last := len(c.Pages) - 1
	cases := []struct {
		name, want string
		edit       func(c *Checkpoint)
	}{
		{"unaligned", "not page aligned", func(c *Checkpoint) { c.Pages[3].Addr += 8 }},
		{"outside", "outside the 39-bit", func(c *Checkpoint) { c.Pages[last].Addr = 1 << 39 }},
		{"far outside", "outside the 39-bit", func(c *Checkpoint) { c.Pages[last].Addr = ^uint64(0) &^ (PageSize - 1) }},
		{"missing", "page table maps", func(c *Checkpoint) { c.Pages = c.Pages[:last] }},
		{"extra", "page table maps", func(c *Checkpoint) { c.Pages = append(c.Pages, Page{Addr: 1<<39 - PageSize}) }},
		{"none", "page table maps", func(c *Checkpoint) { c.Pages = nil }},
		{"swapped", "ascending", func(c *Checkpoint) { c.Pages[1], c.Pages[2] = c.Pages[2], c.Pages[1] }},
		{"moved", "ascending", func(c *Checkpoint) { c.Pages[5].Addr += PageSize << 20 }},
		{"short", "bytes, want", func(c *Checkpoint) { c.Pages[data].Data = c.Pages[data].Data[:100] }},
		{"long", "bytes, want", func(c *Checkpoint) { c.Pages[data].Data = append(c.Pages[data].Data, 0) }},
	}
	for _, tc := range cases {
		cc := stored(c)
		tc.edit(cc)
		if _, err := k.DecodeCheckpoint(cc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	// A page of zeros may come as no data, or as PageSize zero bytes.
	cc := stored(c)
	for i := range cc.Pages {
		if cc.Pages[i].Data == nil {
			cc.Pages[i].Data = make([]byte, PageSize)
		}
	}
	s, err := k.DecodeCheckpoint(cc)
	if err != nil {
		t.Fatal(err)
	}
	if c2, _ := k.EncodeCheckpoint(s); !sameCheckpoint(c, c2) {
		t.Error("explicit zero pages decode to another state")
	}
}

// TestCheckpointRejectsState: states no kernel can reach, encoded, are
// rejected by name. Each case edits a copy of the first snapshot that its
// pick accepts.
func TestCheckpointRejectsState(t *testing.T) {
	k, snaps, _ := rejectSetup(t)
	any := func(*state) bool { return true }
	threads2 := func(st *state) bool { return len(st.threads) >= 2 }
	quarantined := func(st *state) bool { return len(st.heap.quarantine) > 0 }
	live := func(st *state) bool { return len(st.heap.leaks()) > 0 }
	freeLists2 := func(st *state) bool {
		n := 0
		for _, l := range st.heap.free {
			n += min(len(l), 1)
		}
		return n >= 2
	}
	// An enriched snapshot has free lists of several sizes.
	i := slices.IndexFunc(snaps, func(s *snapshot) bool { return len(s.st.threads) >= 3 && s.st.cur >= 0 })
	k.Restore(snaps[i])
	enrich(t, k)
	snaps = append(snaps, k.Snapshot().(*snapshot))
	cases := []struct {
		name, want string
		pick       func(*state) bool
		edit       func(sn *snapshot)
	}{
		{"x0", "x0", any, func(sn *snapshot) { sn.regs[0] = 1 }},
		{"instret", "budget", any, func(sn *snapshot) { sn.instret = smallConfig.MaxInstructions + 1 }},
		{"too many threads", "MaxThreads", any, func(sn *snapshot) {
			for len(sn.st.threads) <= smallConfig.MaxThreads {
				t := *sn.st.threads[len(sn.st.threads)-1]
				t.tid++
				sn.st.threads = append(sn.st.threads, &t)
				sn.st.nextTID = t.tid + 1
			}
		}},
		{"tid order", "out of order", threads2, func(sn *snapshot) { sn.st.threads[0].tid, sn.st.threads[1].tid = 2, 1 }},
		{"tid zero", "out of order", any, func(sn *snapshot) { sn.st.threads[0].tid = 0 }},
		{"next tid", "next tid", threads2, func(sn *snapshot) { sn.st.nextTID = sn.st.threads[1].tid }},
		{"no threads", "no threads", any, func(sn *snapshot) { sn.st.threads, sn.st.cur = nil, -1 }},
		{"cur", "current thread index", any, func(sn *snapshot) { sn.st.cur = len(sn.st.threads) }},
		{"cur negative", "current thread index", any, func(sn *snapshot) { sn.st.cur = -2 }},
		{"run state", "run state", any, func(sn *snapshot) { sn.st.threads[0].state = 3 }},
		{"thread x0", "x0", any, func(sn *snapshot) { sn.st.threads[0].regs[0] = 5 }},
		{"stack", "stack", any, func(sn *snapshot) { sn.st.threads[0].stackLo = sn.st.threads[0].stackHi + 1 }},
		{"sync frames", "sync frames", any, func(sn *snapshot) {
			sn.st.threads[0].calls = make([]syncFrame, maxSyncFrames+1)
			for i := range sn.st.threads[0].calls {
				sn.st.threads[0].calls[i].fn = record.MutexLock
			}
		}},
		{"sync function", "unknown function", any, func(sn *snapshot) { sn.st.threads[0].calls = []syncFrame{{fn: record.SyncFunc(200)}} }},
		{"wait unblocked", "not blocked", any, func(sn *snapshot) { sn.st.threads[0].wait = []waitRange{{1, 2}} }},
		{"mutex unblocked", "not blocked", any, func(sn *snapshot) { sn.st.threads[0].waitMutex = 0x1000 }},
		{"wait range", "wait range", any, func(sn *snapshot) {
			sn.st.threads[0].hblocked, sn.st.threads[0].wait = true, []waitRange{{2, 2}}
		}},
		{"counter", "counter", any, func(sn *snapshot) { sn.st.threads[0].yields = -1 }},
		{"exposed outside stack", "exposed stack range", any, func(sn *snapshot) {
			t := sn.st.threads[0]
			t.exposed = []waitRange{{t.stackHi + 8, t.stackHi + 16}}
		}},
		{"exposed unaligned", "exposed stack range", any, func(sn *snapshot) {
			t := sn.st.threads[0]
			t.exposed = []waitRange{{t.stackHi - 12, t.stackHi - 8}}
		}},
		{"exposed out of order", "exposed stack range", any, func(sn *snapshot) {
			t := sn.st.threads[0]
			t.exposed = []waitRange{{t.stackHi - 16, t.stackHi - 8}, {t.stackHi - 32, t.stackHi - 24}}
		}},
		{"PP kind", "PP kind", any, func(sn *snapshot) { sn.st.lastPP = record.PPExitCall + 1 }},
		{"nondet without its call", "nondet value", any, func(sn *snapshot) { sn.st.threads[0].nondet = 1 }},
		{"yieldTo", "negative tid", any, func(sn *snapshot) { sn.st.yieldTo = -1 }},
		{"sumInstr", "more than instret", any, func(sn *snapshot) { sn.st.sumInstr = sn.instret + 1 }},
		{"work", "overflows", threads2, func(sn *snapshot) { sn.st.work = ^uint64(0) }},
		{"bug before end", "not ended", any, func(sn *snapshot) { sn.st.bug = &record.Bug{Kind: record.BugAssert} }},
		{"bug kind", "bug of kind 0", any, func(sn *snapshot) { sn.st.ended, sn.st.bug = true, &record.Bug{} }},
		{"slot size", "bad size", live, func(sn *snapshot) { sn.st.heap.slots[0].rounded = 24 }},
		{"slot zero", "bad size", live, func(sn *snapshot) { sn.st.heap.slots[0].rounded = 0 }},
		{"heap limit", "bad size", live, func(sn *snapshot) { sn.st.heap.slots[0].rounded = HeapLimit - HeapBase }},
		{"block size", "in a slot of", live, func(sn *snapshot) { sn.st.heap.blocks[0].size = sn.st.heap.slots[0].rounded + 1 }},
		{"block slot", "index", live, func(sn *snapshot) { sn.st.heap.blocks[0].slot = len(sn.st.heap.slots) }},
		{"slot without block", "never held a block", live, func(sn *snapshot) {
			sn.st.heap.slots = append(sn.st.heap.slots, slot{rounded: 16})
		}},
		{"live block freed", "free record", live, func(sn *snapshot) {
			b := sn.st.heap.leaks()[0]
			b.freeThread = 1
		}},
		{"reused live slot", "reuses the slot", live, func(sn *snapshot) {
			b := *sn.st.heap.leaks()[0]
			sn.st.heap.blocks = append(sn.st.heap.blocks, b)
		}},
		{"quarantine twice", "listed twice", quarantined, func(sn *snapshot) {
			sn.st.heap.quarantine = append(sn.st.heap.quarantine, sn.st.heap.quarantine[0])
		}},
		{"quarantine live", "live or listed twice", live, func(sn *snapshot) {
			sn.st.heap.quarantine = append(sn.st.heap.quarantine, sn.st.heap.leaks()[0].slot)
		}},
		{"empty slot quarantined", "never held a block", quarantined, func(sn *snapshot) {
			sn.st.heap.slots = append(sn.st.heap.slots, slot{rounded: 16})
			sn.st.heap.quarantine = append(sn.st.heap.quarantine, len(sn.st.heap.slots)-1)
		}},
		{"quarantine lost", "in no list", quarantined, func(sn *snapshot) { sn.st.heap.quarantine = nil }},
		{"quarantine index", "index", quarantined, func(sn *snapshot) { sn.st.heap.quarantine[0] = 1 << 20 }},
		{"free list twice", "listed twice", quarantined, func(sn *snapshot) {
			s := sn.st.heap.quarantine[0]
			sn.st.heap.free = map[uint64][]int{sn.st.heap.slots[s].rounded: {s}}
		}},
		{"free list sizes", "free list of size", freeLists2, func(sn *snapshot) {
			var sizes []uint64
			for size, l := range sn.st.heap.free {
				if len(l) > 0 {
					sizes = append(sizes, size)
				}
			}
			slices.Sort(sizes)
			f := sn.st.heap.free
			f[sizes[0]], f[sizes[1]] = append(f[sizes[0]], f[sizes[1]]...), nil
		}},
		{"region unaligned", "new_pages region", any, func(sn *snapshot) { sn.st.regions = []region{{0x4000_0001, PageSize}} }},
		{"region empty", "new_pages region", any, func(sn *snapshot) { sn.st.regions = []region{{0x4000_0000, 0}} }},
		{"region in heap", "new_pages region", any, func(sn *snapshot) { sn.st.regions = []region{{HeapBase, PageSize}} }},
		{"region null", "new_pages region", any, func(sn *snapshot) { sn.st.regions = []region{{0, PageSize}} }},
		{"region outside", "new_pages region", any, func(sn *snapshot) { sn.st.regions = []region{{1 << 39, PageSize}} }},
		{"regions overlap", "new_pages region", any, func(sn *snapshot) {
			sn.st.regions = []region{{0x4000_0000, 2 * PageSize}, {0x4000_1000, PageSize}}
		}},
		{"regions unsorted", "new_pages region", any, func(sn *snapshot) {
			sn.st.regions = []region{{0x5000_0000, PageSize}, {0x4000_0000, PageSize}}
		}},
		{"memory", "MaxMemory", any, func(sn *snapshot) { sn.st.regions = []region{{0x4000_0000, 256<<20 + PageSize}} }},
		{"removed", "removed regions", any, func(sn *snapshot) {
			sn.st.removed = make([]removedRegion, 65)
			for i := range sn.st.removed {
				sn.st.removed[i].region = region{0x4000_0000, PageSize}
			}
		}},
		{"removed unaligned", "removed region", any, func(sn *snapshot) {
			sn.st.removed = []removedRegion{{region: region{0x4000_0000, 5}}}
		}},
	}
	for _, tc := range cases {
		i := slices.IndexFunc(snaps, func(s *snapshot) bool { return tc.pick(&s.st) })
		if i < 0 {
			t.Errorf("%s: no snapshot to edit", tc.name)
			continue
		}
		sn := *snaps[i]
		sn.st = snaps[i].st.cloneDeep()
		sn.st.heap = sn.st.heap.clone()
		for j := range sn.st.threads {
			sn.st.threads[j].calls = slices.Clone(sn.st.threads[j].calls)
		}
		tc.edit(&sn)
		c, err := k.EncodeCheckpoint(&sn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.DecodeCheckpoint(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeCheckpoint decodes arbitrary State bytes with the pages of one
// of the seed checkpoints: decoding must not panic, and what decodes must
// encode stably and run safely.
//
//	go test ./kernel -run XXX -fuzz FuzzDecodeCheckpoint
func FuzzDecodeCheckpoint(f *testing.F) {
	// A linearizability test's states (the lineup part of the format).
	lk := newKernel(f, fixtureImage(f, "lockfree/treiber_aba"), Config{EveryAccess: true})
	for depth := 0; depth < 40; depth++ {
		if ended, _ := lk.Ended(); ended {
			break
		}
		if depth%5 == 4 {
			c, err := lk.EncodeCheckpoint(lk.Snapshot())
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(0), c.State)
		}
		if _, err := lk.Step(lk.Default()); err != nil {
			f.Fatal(err)
		}
	}
	img := fixtureImage(f, "ref/paradise_lost")
	var seeds []*Checkpoint
	k := newKernel(f, img, smallConfig)
	for _, ch := range []schedule.Chooser{schedule.Default{}, schedule.NewRandom(1)} {
		k2 := newKernel(f, img, smallConfig)
		for depth := 0; ; depth++ {
			if depth%4 == 0 {
				c, err := k2.EncodeCheckpoint(k2.Snapshot())
				if err != nil {
					f.Fatal(err)
				}
				f.Add(uint8(len(seeds)), c.State)
				seeds = append(seeds, c)
			}
			if ended, _ := k2.Ended(); ended {
				break
			}
			c, _ := ch.Choose(k2, depth)
			if _, err := k2.Step(c); err != nil {
				f.Fatal(err)
			}
		}
	}
	// And an enriched state, for the parts of the format no run reaches.
	k2 := newKernel(f, img, smallConfig)
	for len(k2.st.threads) < 3 || k2.st.cur < 0 {
		if _, err := k2.Step(k2.Default()); err != nil {
			f.Fatal(err)
		}
	}
	enrich(f, k2)
	c, err := k2.EncodeCheckpoint(k2.Snapshot())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(seeds)), c.State)
	seeds = append(seeds, c)
	decoders := make([]*Kernel, len(seeds))
	for i := range decoders {
		decoders[i] = k
	}
	// And one inside a weak transaction (HTMConfig.Weak), which a kernel
	// of that configuration decodes: its undo log and registers.
	kw, wimg, wcfg := inWeakTxn(f)
	if c, err = kw.EncodeCheckpoint(kw.Snapshot()); err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(seeds)), c.State)
	seeds = append(seeds, c)
	decoders = append(decoders, newKernel(f, wimg, wcfg))
	// And one with a nondet value chosen (posix/deposits: the 'N' part).
	dimg := fixtureImage(f, "posix/deposits")
	dcfg := Config{Args: []string{"deposits", "3"}}
	kd := newKernel(f, dimg, dcfg)
	for chosen := false; !chosen; {
		ch := kd.Default()
		s := kd.Snapshot()
		tr, err := kd.Step(ch)
		if err != nil {
			f.Fatal(err)
		}
		if tr.PP.Kind == record.PPNondet {
			kd.Restore(s)
			ch.Value = 2
			if _, err := kd.Step(ch); err != nil {
				f.Fatal(err)
			}
			chosen = true
		}
	}
	if c, err = kd.EncodeCheckpoint(kd.Snapshot()); err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(seeds)), c.State)
	seeds = append(seeds, c)
	decoders = append(decoders, newKernel(f, dimg, dcfg))
	// And one inside an SV-COMP atomic section (the 'V' part): the
	// worker stopped at the nondet call inside it.
	simg := fixtureImage(f, "posix/svcomp_sections")
	scfg := Config{EveryAccess: true, SVCOMP: true}
	ks := newKernel(f, simg, scfg)
	for inside := false; !inside; {
		if ended, _ := ks.Ended(); ended {
			f.Fatal("posix/svcomp_sections ended without stopping inside its atomic section")
		}
		// The highest thread first: the worker, once it exists.
		run := ks.Runnable()
		tr, err := ks.Step(record.Choice{Thread: run[len(run)-1]})
		if err != nil {
			f.Fatal(err)
		}
		inside = tr.PP.Kind == record.PPNondet && slices.ContainsFunc(ks.st.threads, func(t *thread) bool { return t.atomic > 0 })
	}
	if c, err = ks.EncodeCheckpoint(ks.Snapshot()); err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(seeds)), c.State)
	seeds = append(seeds, c)
	decoders = append(decoders, newKernel(f, simg, scfg))
	f.Fuzz(func(t *testing.T, which uint8, state []byte) {
		i := int(which) % len(seeds)
		c := &Checkpoint{State: state, Pages: seeds[i].Pages}
		if s, err := decoders[i].DecodeCheckpoint(c); err == nil {
			tryRun(t, decoders[i], s)
		}
	})
}

// TestCheckpointSize reports what a checkpoint of a typical snapshot holds.
func TestCheckpointSize(t *testing.T) {
	for _, name := range []string{"ref/paradise_lost", "ref/thr_exit_join"} {
		img := fixtureImage(t, name)
		ref, k, snaps := snapshots(t, img, Config{}, schedule.NewRandom(1))
		for _, i := range []int{0, len(ref.Schedule) / 2, len(ref.Schedule)} {
			c, err := k.EncodeCheckpoint(snaps[i])
			if err != nil {
				t.Fatal(err)
			}
			data := 0
			for _, p := range c.Pages {
				if p.Data != nil {
					data++
				}
			}
			st := &snaps[i].st
			t.Logf("%s at PP %d/%d (%d threads, %d heap blocks): State %d bytes; %d pages mapped, %d not zero (%d KiB)",
				name, i, len(ref.Schedule), len(st.threads), len(st.heap.blocks), len(c.State), len(c.Pages), data, data*PageSize/1024)
			if len(c.State) == 0 || len(c.Pages) != snaps[i].mem.Pages() {
				t.Fatal("empty state or pages missing")
			}
		}
	}
}

// TestCheckpointAtXbegin: a thread stopped at an _xbegin survives a
// checkpoint (bit 0x80 of its run-state byte): restored from the encoded
// state, both of its choices there (the transaction, an injected RETRY
// abort) run as from the live snapshot.
func TestCheckpointAtXbegin(t *testing.T) {
	img := fixtureImage(t, "htm/counter")
	k := newKernel(t, img, Config{})
	var tid record.TID
	for tid == 0 {
		if ended, _ := k.Ended(); ended {
			t.Fatal("counter ended before an _xbegin")
		}
		tr, err := k.Step(k.Default())
		if err != nil {
			t.Fatal(err)
		}
		if tr.PP.Kind == record.PPXbegin {
			tid = tr.Thread
		}
	}
	live := k.Snapshot()
	c, err := k.EncodeCheckpoint(live)
	if err != nil {
		t.Fatal(err)
	}
	if c.State[0] != CheckpointVersion {
		t.Fatalf("version byte %d", c.State[0])
	}
	k2 := newKernel(t, img, Config{})
	decoded, err := k2.DecodeCheckpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	ths := decoded.(*snapshot).st.threads
	if i := slices.IndexFunc(ths, func(th *thread) bool { return th.tid == tid }); i < 0 || !ths[i].atXbegin {
		t.Fatalf("thread %d is not at its _xbegin after decoding", tid)
	}
	for _, v := range []int64{0, record.XabortRetry} {
		k.Restore(live)
		k2.Restore(decoded)
		a, errA := k.Step(record.Choice{Thread: tid, Value: v})
		b, errB := k2.Step(record.Choice{Thread: tid, Value: v})
		if errA != nil || errB != nil {
			t.Fatalf("value %d: %v, %v", v, errA, errB)
		}
		if record.Hash([]*record.Transition{a}) != record.Hash([]*record.Transition{b}) {
			t.Errorf("value %d: the decoded state runs a different transition", v)
		}
		want := record.SyncTxnBegin
		if v != 0 {
			want = record.SyncTxnAbort
		}
		if len(a.Sync) == 0 || a.Sync[0].Kind != want {
			t.Errorf("value %d: first event %v, want %v", v, a.Sync, want)
		}
	}
	// A value where no thread is at an _xbegin is refused.
	k.Restore(live)
	k.Step(record.Choice{Thread: tid})
	if _, err := k.Step(record.Choice{Thread: k.Default().Thread, Value: record.XabortRetry}); err == nil || !strings.Contains(err.Error(), "not at an _xbegin") {
		t.Errorf("a value off an _xbegin: %v", err)
	}
}

// inWeakTxn runs weak_undo under weak atomicity (HTMConfig.Weak) until a
// thread is inside its transaction with a write logged; it returns the
// kernel, the image and the configuration.
func inWeakTxn(t testing.TB) (*Kernel, []byte, Config) {
	t.Helper()
	img := fixtureImage(t, "htm/weak_undo")
	pcs, err := MemoryPCs(img, []string{"iteration"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataRacePCs: pcs, HTM: HTMConfig{AbortCodes: true, Weak: true}}
	k := newKernel(t, img, cfg)
	for k.st.wtx == nil || len(k.st.wtx.undo) == 0 {
		if ended, _ := k.Ended(); ended {
			t.Fatal("weak_undo ended before its transaction wrote")
		}
		if _, err := k.Step(k.Default()); err != nil {
			t.Fatal(err)
		}
	}
	return k, img, cfg
}

// TestCheckpointInWeakTxn: a checkpoint taken inside a weak transaction
// (HTMConfig.Weak: it spans PPs) keeps the transaction in flight, its
// undo log and the _xbegin's registers: the decoded state aborts it
// (weak_undo's _xabort) with the same transitions as the live one.
func TestCheckpointInWeakTxn(t *testing.T) {
	k, img, cfg := inWeakTxn(t)
	pcs := cfg.DataRacePCs
	live := k.Snapshot()
	c, err := k.EncodeCheckpoint(live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newKernel(t, img, Config{DataRacePCs: pcs, HTM: HTMConfig{AbortCodes: true}}).DecodeCheckpoint(c); err == nil {
		t.Error("a strong-atomicity kernel decoded a weak checkpoint")
	}
	k2 := newKernel(t, img, cfg)
	decoded, err := k2.DecodeCheckpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := decoded.(*snapshot).st.wtx, live.(*snapshot).st.wtx; got == nil || got.tid != want.tid || len(got.undo) != len(want.undo) || got.regs != want.regs {
		t.Fatalf("decoded transaction %+v, want %+v", got, want)
	}
	k.Restore(live)
	k2.Restore(decoded)
	var a, b []*record.Transition
	for _, m := range []struct {
		k   *Kernel
		out *[]*record.Transition
	}{{k, &a}, {k2, &b}} {
		for {
			if ended, _ := m.k.Ended(); ended {
				break
			}
			tr, err := m.k.Step(m.k.Default())
			if err != nil {
				t.Fatal(err)
			}
			*m.out = append(*m.out, tr)
		}
	}
	if record.Hash(a) != record.Hash(b) {
		t.Error("the decoded state runs differently")
	}
	if _, bug := k2.Ended(); bug != nil {
		t.Errorf("the decoded run ends with %v", bug)
	}
}
