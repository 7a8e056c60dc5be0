package job

import (
	"strings"
	"testing"

	"landslide/race"
	"landslide/record"
)

// TestRacePairNamesThisTrace: a race candidate keeps the thread numbers of
// the interleaving it was first seen in; a trace's race note names the
// thread of *this* trace that runs the other access (before, a trace
// whose thread 2 stopped at the PP said "races with thread 2's read",
// the candidate's numbering), or "another thread" if none does here.
func TestRacePairNamesThisTrace(t *testing.T) {
	c := &RaceReport{Candidate: &race.Candidate{
		A: race.Side{PC: 0x100, Thread: 3, Write: true},
		B: race.Side{PC: 0x200, Thread: 2, Write: false},
	}}
	acc := func(pc uint64) []record.Access { return []record.Access{{Addr: 0x5000, Size: 4, PC: pc}} }
	trs := []*record.Transition{
		{Thread: 1},
		{Thread: 2, PP: record.PP{Kind: record.PPDataRace, PC: 0x100}}, // step 1: thread 2 stops before its write at 0x100
		{Thread: 3, Accesses: acc(0x200)},                              // thread 3 reads at 0x200
		{Thread: 2, Accesses: acc(0x100)},
	}
	p := racePair(nil, 0x100, c, trs, 1, nil)
	if p.OtherThread != 3 || !strings.Contains(p.Text, "races with thread 3's read at") {
		t.Errorf("race note %q (other thread %d), want thread 3's read", p.Text, p.OtherThread)
	}
	if p.OtherName() != "thread 3" {
		t.Errorf("OtherName %q", p.OtherName())
	}
	// The read only before the PP: the last one before it.
	trs2 := []*record.Transition{{Thread: 4, Accesses: acc(0x200)}, {Thread: 2, PP: record.PP{Kind: record.PPDataRace, PC: 0x100}}}
	if p := racePair(nil, 0x100, c, trs2, 1, nil); p.OtherThread != 4 {
		t.Errorf("race note %q: want thread 4's, the one before", p.Text)
	}
	// No other thread reads there in this trace.
	trs3 := []*record.Transition{{Thread: 2, PP: record.PP{Kind: record.PPDataRace, PC: 0x100}}, {Thread: 2, Accesses: acc(0x200)}}
	if p := racePair(nil, 0x100, c, trs3, 0, nil); p.OtherThread != 0 || !strings.Contains(p.Text, "another thread's read") || p.OtherName() != "another thread" {
		t.Errorf("race note %q (other thread %d), want another thread's", p.Text, p.OtherThread)
	}
}
