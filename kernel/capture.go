package kernel

import "landslide/record"

// AccessStack re-runs thread tid's transition from snap and returns the
// stack at the first access made by the instruction at pc (frame 0 is pc),
// or nil if that transition made none. Race reports use it to show where
// each racing access happened without unwinding at every access. The
// machine is left after that transition: restore a snapshot next.
func (k *Kernel) AccessStack(snap record.Snapshot, tid record.TID, pc uint64) []uint64 {
	return k.AccessStacks(snap, tid, []uint64{pc})[pc]
}

// AccessStacks is AccessStack for several instructions of one transition
// at once, in one re-run: the stack at the first access of each pc (no
// entry for a pc the transition did not run). A program whose threads
// race at hundreds of instructions has as many candidates per transition,
// and re-running the transition once per candidate took minutes.
func (k *Kernel) AccessStacks(snap record.Snapshot, tid record.TID, pcs []uint64) map[uint64][]uint64 {
	k.Restore(snap)
	want := make(map[uint64][]uint64, len(pcs))
	for _, pc := range pcs {
		want[pc] = nil
	}
	k.capture = want
	defer func() { k.capture = nil }()
	if _, err := k.Step(record.Choice{Thread: tid}); err != nil {
		return nil
	}
	for pc, st := range want {
		if st == nil {
			delete(want, pc)
		}
	}
	return want
}

// StepValues is Step, also giving the value that the first access made
// by each instruction of pcs in this transition read or wrote (as the
// little-endian bytes of its size; no entry for an instruction that made
// no shared access). Bug traces show the values of racing accesses with
// it, on a re-run of the trace: no exploration pays for it.
func (k *Kernel) StepValues(c record.Choice, pcs []uint64) (*record.Transition, map[uint64]uint64, error) {
	k.values = make(map[uint64]*uint64, len(pcs))
	for _, pc := range pcs {
		k.values[pc] = nil
	}
	defer func() { k.values = nil }()
	t, err := k.Step(c)
	got := make(map[uint64]uint64, len(pcs))
	for pc, v := range k.values {
		if v != nil {
			got[pc] = *v
		}
	}
	return t, got, err
}
