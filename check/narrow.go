package check

import (
	"slices"

	"landslide/job"
	"landslide/kernel"
	"landslide/schedule"
)

// LifecycleFuncs are the thread library's lifecycle functions (the P2
// API's), which a test whose subject is not the thread lifecycle leaves
// out of its PP set (thesis §4.5: LANDSLIDE_CONFIG("without thr_create")).
var LifecycleFuncs = []string{"thr_create", "thr_exit", "thr_join"}

// NarrowingDirectives are the LANDSLIDE_CONFIG directives that would
// narrow cfg's PP set where the thread library's lifecycle dominates it:
// cfg has no filter of its own (and the program none), and in one run
// of the default schedule at least a quarter of the PPs are inside a
// lifecycle function (each such PP multiplies the interleavings of every
// other thread's: paraguay's space shrinks from an estimated 20 million
// to 2.3 million without them), which then gets a "without" each. Nil
// when that is not so; else also the PPs inside and in all.
func NarrowingDirectives(cfg job.Config) (ds []string, inside, all int) {
	if len(cfg.Kernel.Filters) > 0 || cfg.PreemptEverywhere || cfg.Kernel.EveryAccess {
		return nil, 0, 0
	}
	k, err := kernel.New(cfg.Image, cfg.Spec.KernelConfig())
	if err != nil {
		return nil, 0, 0
	}
	syms := k.Symbols()
	out, err := k.Play(schedule.Default{})
	if err != nil || len(out.Transitions) == 0 {
		return nil, 0, 0
	}
	var seen []string
	for _, tr := range out.Transitions {
		hit := false
		for i, pc := range tr.Stack {
			if i > 0 && pc >= 4 {
				pc -= 4 // a return address: its call names the frame
			}
			name, _, ok := syms.FuncAt(pc)
			if ok && slices.Contains(LifecycleFuncs, name) {
				hit = true
				if !slices.Contains(seen, name) {
					seen = append(seen, name)
				}
			}
		}
		if hit {
			inside++
		}
	}
	all = len(out.Transitions)
	if 4*inside < all {
		return nil, 0, 0
	}
	for _, f := range LifecycleFuncs { // in a fixed order
		if slices.Contains(seen, f) {
			ds = append(ds, "without "+f)
		}
	}
	return ds, inside, all
}
