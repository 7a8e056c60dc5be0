package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler writes the --cpuprofile and --memprofile of one command: the
// CPU profile from the command's start, and the allocation profile
// (every allocation since the process began, by site: alloc_space and
// alloc_objects; inuse_* as of the end) when it ends, however it ends.
// `go tool pprof FILE` reads both.
type profiler struct {
	cpuPath, memPath string
	cpu              *os.File
}

func addProfileFlags(root *cobra.Command, p *profiler) {
	root.PersistentFlags().StringVar(&p.cpuPath, "cpuprofile", "", "write a CPU profile of the command to `FILE` (go tool pprof reads it)")
	root.PersistentFlags().StringVar(&p.memPath, "memprofile", "", "write an allocation profile of the command to `FILE` when it ends")
}

// start begins the CPU profile, if asked for.
func (p *profiler) start() error {
	if p.cpuPath == "" {
		return nil
	}
	f, err := os.Create(p.cpuPath)
	if err != nil {
		return usageErr("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return usageErr("--cpuprofile: %v", err)
	}
	p.cpu = f
	return nil
}

// stop ends the CPU profile and writes the allocation profile; it
// returns what went wrong, for one line on stderr.
func (p *profiler) stop() error {
	var first error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			first = fmt.Errorf("--cpuprofile: %v", err)
		}
		p.cpu = nil
	}
	if p.memPath != "" {
		runtime.GC() // the in-use figures as of the end
		f, err := os.Create(p.memPath)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("--memprofile: %v", err)
		}
	}
	return first
}
