package job

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"landslide/emu/elfsym"
	"landslide/kernel"
	"landslide/record"
	"landslide/schedule"
)

// PPRequest is a PP set and machine limits as a user asks for them (the
// flags of run, explore and quicksand), before they are resolved against
// the program. Zero values are the defaults.
type PPRequest struct {
	// PPs are sync functions (a PP at their entry) and data-race PPs
	// (0xADDR or symbol+offset); nil for the default sync set
	// (kernel.DefaultSyncPPs), empty for none.
	PPs           []string
	DataRacePPs   []string // instructions to preempt before
	DataRaceFuncs []string // every shared-memory instruction of these functions
	Within        []string // only preempt with one of these on the stack
	Without       []string // never preempt with one of these on the stack
	// NoTestConfig ignores the program's LANDSLIDE_CONFIG directives
	// (Within and Without replace its filters anyway).
	NoTestConfig bool
	// Everywhere preempts before every shared access (the thesis's -0).
	Everywhere bool
	// EveryAccess makes every shared access a PP, an LR/SC pair one
	// (kernel.Config.EveryAccess: Nidhugg's and GenMC's events).
	EveryAccess bool

	// WaitForThreads: returning from main ends the main thread only, and
	// the program ends with its last thread (Nidhugg's and GenMC's
	// convention; kernel.Config.WaitForThreads).
	WaitForThreads bool
	// SVCOMP: SV-COMP's conventions (kernel.Config.SVCOMP).
	SVCOMP bool
	// ThesisHeuristics: the thesis's loop heuristics in place of the
	// spin-loop rule (kernel.Config.ThesisHeuristics): no verification.
	ThesisHeuristics bool

	MaxInstructions uint64
	MaxPPs          int
	MaxThreads      int
	MaxMemory       uint64
	Args            []string // the guest's argv (argv[0] first)
}

// ResolvedPPs is a PP request resolved against a program.
type ResolvedPPs struct {
	Kernel kernel.Config
	// Directives are the program's own directives that apply (none when
	// Within, Without or NoTestConfig overrode them), to tell the user.
	Directives []string
	// TestingMutexes: the program declares it tests its mutexes.
	TestingMutexes bool
}

// ResolvePPs is the one place a PP set is made: sync functions and
// data-race PPs from r, resolved with the program's symbols, narrowed by
// the filters (r's, or else the program's own directives), or every
// shared access. Every error is the user's (a name the program lacks, an
// address that is not an instruction, a bad directive).
func ResolvePPs(image []byte, r PPRequest) (ResolvedPPs, error) {
	var out ResolvedPPs
	img, err := elfsym.Parse(image)
	if err != nil {
		return out, err
	}
	syms := img.Symbols
	cfg := kernel.Config{MaxInstructions: r.MaxInstructions, MaxPPs: r.MaxPPs, MaxThreads: r.MaxThreads, MaxMemory: r.MaxMemory, Args: r.Args, WaitForThreads: r.WaitForThreads, ThesisHeuristics: r.ThesisHeuristics, SVCOMP: r.SVCOMP}
	if r.PPs != nil {
		cfg.SyncPPs = []string{}
		for _, p := range r.PPs {
			if IsAddrSpec(p) {
				a, err := ParseAddr(p, syms)
				if err != nil {
					return out, fmt.Errorf("--pp %v", err)
				}
				cfg.DataRacePCs = append(cfg.DataRacePCs, a)
				continue
			}
			if _, _, ok := syms.Lookup(p); !ok {
				return out, fmt.Errorf("--pp %q: no such function in the program", p)
			}
			cfg.SyncPPs = append(cfg.SyncPPs, p)
		}
	}
	for _, s := range r.DataRacePPs {
		a, err := ParseAddr(s, syms)
		if err != nil {
			return out, fmt.Errorf("--data-race-pp %v", err)
		}
		if !syms.IsInstruction(a) {
			return out, fmt.Errorf("--data-race-pp %s: 0x%x is not an instruction of the program", s, a)
		}
		cfg.DataRacePCs = append(cfg.DataRacePCs, a)
	}
	if len(r.DataRaceFuncs) > 0 {
		pcs, err := kernel.SharedMemoryPCs(image, r.DataRaceFuncs)
		if err != nil {
			return out, fmt.Errorf("--data-race-func: %v", err)
		}
		cfg.DataRacePCs = append(cfg.DataRacePCs, pcs...)
	}
	for _, pc := range cfg.DataRacePCs {
		if !syms.IsInstruction(pc) {
			return out, fmt.Errorf("--pp: data-race PP 0x%x is not an instruction of the program", pc)
		}
	}
	slices.Sort(cfg.DataRacePCs)
	cfg.DataRacePCs = slices.Compact(cfg.DataRacePCs)
	if r.EveryAccess && r.Everywhere {
		return out, fmt.Errorf("--every-access and --preempt-everywhere are two ways to preempt at every shared access: choose one")
	}
	if r.EveryAccess {
		cfg.EveryAccess = true
		if cfg.MaxPPs == 0 {
			cfg.MaxPPs = kernel.TooDeepPreemptEverywhere
		}
	}
	if r.Everywhere && len(cfg.DataRacePCs) > 0 {
		return out, fmt.Errorf("--preempt-everywhere already preempts at every shared access: drop the data-race PPs")
	}
	for _, w := range r.Within {
		cfg.Filters = append(cfg.Filters, kernel.Filter{Within: true, Func: w})
	}
	for _, w := range r.Without {
		cfg.Filters = append(cfg.Filters, kernel.Filter{Func: w})
	}
	directives, reference := kernel.TestDirectives(img.Directives)
	// With every access an event, the reference library's thread calls
	// are events too (kernel/thrlib.go).
	cfg.ModelThreads = r.EveryAccess && reference
	if !r.NoTestConfig && len(directives) > 0 {
		// The test's own configuration (thesis §4.5 configured tests this
		// way; the SDK's LANDSLIDE_CONFIG puts it in the binary).
		d, err := kernel.ParseDirectives(directives, syms)
		switch {
		case len(cfg.Filters) == 0 && err != nil:
			return out, fmt.Errorf("%v (--no-test-config ignores the program's directives)", err)
		case len(cfg.Filters) == 0:
			cfg.Filters, out.Directives, out.TestingMutexes = d.Filters, directives, d.TestingMutexes
		case err == nil && d.TestingMutexes: // --within/--without replace only the filters
			out.Directives, out.TestingMutexes = []string{"testing_mutexes"}, true
		}
	}
	for _, flt := range cfg.Filters {
		if _, _, ok := syms.Lookup(flt.Func); !ok {
			flag := "--without"
			if flt.Within {
				flag = "--within"
			}
			return out, fmt.Errorf("%s %q: no such function in the program", flag, flt.Func)
		}
	}
	if r.Everywhere {
		pcs, err := kernel.SharedAccessPCs(image)
		if err != nil {
			return out, err
		}
		cfg.DataRacePCs = pcs
		if cfg.MaxPPs == 0 {
			cfg.MaxPPs = kernel.TooDeepPreemptEverywhere
		}
	}
	out.Kernel = cfg
	return out, nil
}

// IsAddrSpec tells a data-race PP (0x…, a number, symbol+offset) from a
// function name in --pp.
func IsAddrSpec(s string) bool {
	if strings.Contains(s, "+") {
		return true
	}
	_, err := strconv.ParseUint(s, 0, 64)
	return err == nil
}

// ParseAddr reads 0x1234, 1234 or symbol+offset against the program.
func ParseAddr(s string, syms *elfsym.Symbols) (uint64, error) {
	if v, err := strconv.ParseUint(s, 0, 64); err == nil {
		return v, nil
	}
	name, off, _ := strings.Cut(s, "+")
	base, _, ok := syms.Lookup(name)
	if !ok {
		return 0, fmt.Errorf("%q: no such symbol in the program", name)
	}
	var o uint64
	if off != "" {
		var err error
		if o, err = strconv.ParseUint(off, 0, 64); err != nil {
			return 0, fmt.Errorf("%q: bad offset %q", s, off)
		}
	}
	return base + o, nil
}

// ReplayCommand is the `landslide run` command line that replays choices
// under the job's PP set: the inverse of ResolvePPs for the same flags
// (TestReplayCommandRoundTrip).
func ReplayCommand(s Spec, cs []record.Choice) string {
	var b strings.Builder
	fmt.Fprintf(&b, "landslide run %s", shellQuote(s.Program))
	k := s.Kernel
	if k.MaxThreads != 0 {
		fmt.Fprintf(&b, " --max-threads %d", k.MaxThreads)
	}
	if k.MaxMemory != 0 {
		fmt.Fprintf(&b, " --max-memory %s", FormatSize(k.MaxMemory))
	}
	if k.MaxPPs != 0 && !s.PreemptEverywhere && !k.EveryAccess {
		fmt.Fprintf(&b, " --max-pps %d", k.MaxPPs)
	}
	if k.MaxInstructions != 0 {
		fmt.Fprintf(&b, " --max-instructions %d", k.MaxInstructions)
	}
	if k.SyncPPs != nil {
		fmt.Fprintf(&b, " --pp '%s'", strings.Join(k.SyncPPs, ","))
	}
	if k.EveryAccess {
		b.WriteString(" --every-access")
	}
	if s.PreemptEverywhere {
		b.WriteString(" --preempt-everywhere")
	} else {
		for _, pc := range k.DataRacePCs {
			fmt.Fprintf(&b, " --data-race-pp 0x%x", pc)
		}
	}
	for _, f := range k.Filters {
		if f.Within {
			fmt.Fprintf(&b, " --within %s", f.Func)
		} else {
			fmt.Fprintf(&b, " --without %s", f.Func)
		}
	}
	if s.AbortCodes {
		b.WriteString(" --abort-codes")
	}
	if s.WeakAtomicity {
		b.WriteString(" --weak-atomicity")
	}
	if k.WaitForThreads {
		b.WriteString(" --wait-for-threads")
	}
	if k.SVCOMP {
		b.WriteString(" --svcomp")
	}
	fmt.Fprintf(&b, " --schedule %s", schedule.Format(cs))
	if len(k.Args) > 1 {
		b.WriteString(" --")
		for _, a := range k.Args[1:] {
			b.WriteString(" " + shellQuote(a))
		}
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FormatSize prints a byte count as --max-memory takes it (ParseSize):
// in GiB or MiB when it is a whole number of them, else in bytes.
func FormatSize(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprint(n)
}

// ParseSize reads a byte count as --max-memory takes it: a number of
// bytes, or of KiB, MiB or GiB with the suffix K, M or G (KiB, MiB, GiB,
// KB, MB and GB are the same: powers of two).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	var shift uint
	switch strings.ToUpper(strings.TrimSpace(t[len(num):])) {
	case "", "B":
	case "K", "KB", "KIB":
		shift = 10
	case "M", "MB", "MIB":
		shift = 20
	case "G", "GB", "GIB":
		shift = 30
	default:
		return 0, fmt.Errorf("%q: not a size (bytes, or a number with K, M or G)", s)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > math.MaxUint64>>shift {
		return 0, fmt.Errorf("%q: not a size (bytes, or a number with K, M or G)", s)
	}
	return n << shift, nil
}
