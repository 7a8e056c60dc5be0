package kernel

import "landslide/record"

// AccessStack re-runs thread tid's transition from snap and returns the
// stack at the first access made by the instruction at pc (frame 0 is pc),
// or nil if that transition made none. Race reports use it to show where
// each racing access happened without unwinding at every access. The
// machine is left after that transition: restore a snapshot next.
func (k *Kernel) AccessStack(snap record.Snapshot, tid record.TID, pc uint64) []uint64 {
	k.Restore(snap)
	k.capturePC, k.captured = pc, nil
	defer func() { k.capturePC, k.captured = 0, nil }()
	if _, err := k.Step(record.Choice{Thread: tid}); err != nil {
		return nil
	}
	return k.captured
}
