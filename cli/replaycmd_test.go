package cli

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"landslide/check"
	"landslide/job"
	"landslide/record"
)

// TestReplayCommandRoundTrip: the `landslide run` command a report prints
// (job.ReplayCommand) resolves, through run's own flags, to the machine
// configuration of the exploration it replays: the conventions that
// change what a program does (--wait-for-threads, --svcomp) included.
func TestReplayCommandRoundTrip(t *testing.T) {
	img, err := os.ReadFile("../fixtures/bin/posix/svcomp_sections.elf")
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []check.PPRequest{
		{},
		{EveryAccess: true, WaitForThreads: true},
		{EveryAccess: true, SVCOMP: true, MaxThreads: 8},
		{Without: []string{"worker"}, SVCOMP: true, WaitForThreads: true},
	} {
		res, err := check.ResolvePPs(img, req)
		if err != nil {
			t.Fatal(err)
		}
		spec := job.Spec{Program: "p.elf", Kernel: res.Kernel}
		line := job.ReplayCommand(spec, []record.Choice{{Thread: 1}})
		args := strings.Fields(line)
		if len(args) < 3 || args[0] != "landslide" || args[1] != "run" {
			t.Fatalf("%q", line)
		}
		var f ppFlags
		fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.register(fl)
		var sched string
		fl.StringVar(&sched, "schedule", "", "")
		if err := fl.Parse(args[3:]); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		back, err := check.ResolvePPs(img, f.request(fl.Changed("pp")))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !reflect.DeepEqual(back.Kernel, res.Kernel) {
			t.Errorf("%q resolves to\n%+v, want\n%+v", line, back.Kernel, res.Kernel)
		}
	}
}
