package report

import (
	"fmt"
	"testing"
)

// What the external tests (package report_test, which use the test
// helpers of internal/testutil) need from the package's own tests.
var (
	SampleTrace = sampleTrace
	WideTrace   = wideTrace
)

func RenderHTML(t *testing.T, tr *Trace) string { return renderHTML(t, tr) }

// wideTrace is a trace with many threads and long frames, the failing
// step in the last (rightmost) thread's column.
func wideTrace(threads int) *Trace {
	tr := &Trace{Program: "fixtures/wide.elf", Bug: &Bug{Kind: "assert", Message: "assertion failed", Thread: int32(threads)}}
	for th := 1; th <= threads; th++ {
		tr.Threads = append(tr.Threads, int32(th))
		stack := []Frame{
			fr(0x10000+uint64(th), fmt.Sprintf("a_rather_long_function_name_of_thread_%d", th), "fixtures/src/tests/some_long_directory/wide_test_program.c", 100+th),
			fr(0x11000+uint64(th), "thr_wrapper", "sdk/thrlib/thread.c", 83),
		}
		tr.Steps = append(tr.Steps, Step{Index: th - 1, Thread: int32(th), PP: "yield", PPKind: "yield", Stack: stack,
			Events: []string{"mutex_lock(0x15030) returned"}})
	}
	last := &tr.Steps[len(tr.Steps)-1]
	last.Failure, last.PP, last.PPKind = true, "end", "end"
	return tr
}
