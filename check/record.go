package check

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"landslide/job"
	"landslide/store"
)

// Recording says whether and how a check is kept in a store. The zero
// value records nothing.
type Recording struct {
	Store *store.Store // nil: nothing is recorded (no resume, replay or offline analysis)
	// Args is the command line as given, recorded with a new run.
	Args []string
	// Commit after Every interleavings or Interval, whichever first;
	// store the machine's state every CheckpointEvery PPs along the
	// branch (negative: never); NoBranchLog leaves the interleavings out.
	// Zero values are job's defaults.
	Every           int
	Interval        time.Duration
	CheckpointEvery int
	NoBranchLog     bool
	// OnRun sees a new run as soon as it is recorded, before anything
	// is explored (the CLI says how to resume it).
	OnRun func(*store.Run)
}

// StoreError is a failure of the store (not of the program or the
// exploration): the caller says what it means for committed work.
type StoreError struct {
	Dir string
	Err error
}

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

func (r *Recording) storeErr(err error) error {
	if err == nil {
		return nil
	}
	return &StoreError{Dir: r.Store.Dir(), Err: err}
}

// persist is how a job of run commits itself.
func (r *Recording) persist(run *store.Run, jobID int) *job.Persist {
	return &job.Persist{Store: r.Store, Run: run, Job: jobID, Every: r.Every, Interval: r.Interval,
		CheckpointEvery: r.CheckpointEvery, NoBranchLog: r.NoBranchLog}
}

// newRun records a new run of spec (command is "explore" or "quicksand").
func (r *Recording) newRun(command string, spec job.Spec, image []byte) (*store.Run, error) {
	b, err := job.EncodeSpec(spec)
	if err != nil {
		return nil, r.storeErr(err)
	}
	bin, err := r.Store.PutBinary(image)
	if err != nil {
		return nil, r.storeErr(err)
	}
	run := &store.Run{Command: command, Program: spec.Program, Binary: bin, Args: r.Args, Spec: b, Env: Env(), Status: store.StatusRunning}
	if err := r.Store.NewRun(run); err != nil {
		return nil, r.storeErr(err)
	}
	if r.OnRun != nil {
		r.OnRun(run)
	}
	return run, nil
}

// stored is a stored run's job spec and program image (to resume it).
func (r *Recording) stored(run *store.Run) (job.Spec, []byte, error) {
	spec, err := job.DecodeSpec(run.Spec)
	if err != nil {
		return spec, nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	img, err := r.Store.Binary(run.Binary)
	if err != nil {
		return spec, nil, r.storeErr(err)
	}
	return spec, img, nil
}

// Env describes this machine and build (recorded with each run).
func Env() store.Env {
	e := store.Env{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Version: "devel"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		e.Version = BuildVersion(bi)
	}
	e.Host, _ = os.Hostname()
	return e
}

// BuildVersion names the build: the module version of a released build,
// else the commit it was built from (12 digits), with the commit's date
// and "+modified" when the tree had uncommitted changes, as Go records
// them (go build's -buildvcs, on by default in a git checkout); else
// "(devel, built without version control information)".
func BuildVersion(bi *debug.BuildInfo) string {
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		return bi.Main.Version
	case len(rev) >= 12:
		v := rev[:12]
		if modified {
			v += "+modified"
		}
		if t, err := time.Parse(time.RFC3339, at); err == nil {
			v += " (" + t.UTC().Format("2006-01-02 15:04 UTC") + ")"
		}
		return v
	}
	return "(devel, built without version control information)"
}
