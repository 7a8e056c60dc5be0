package kernel

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"landslide/fixtures"
	"landslide/record"
)

// BenchmarkThreads measures what a live thread costs the checker, for
// the default thread limit (Config.MaxThreads): a machine is stopped with
// n threads alive (posix/many_threads: main has created n-1 workers, each
// stopped at its start), and there
//
//   - snapshot+restore is one Snapshot and one Restore, as an explorer
//     backtracks (each copies the thread table: state.clone). B/op is
//     what the two copies allocate; a DPOR branch keeps one snapshot
//     per PP;
//   - transition is one worker's transition (Step from its start to the
//     PP before its pthread_mutex_lock), timed alone, the machine put
//     back after each; and runnable the Runnable call an explorer makes
//     at every PP;
//   - the metrics guest-B/thread and host-B/thread are the guest memory
//     a thread is charged against Config.MaxMemory (its pthread stack,
//     PthreadStackSize, mapped copy-on-write) and the Go heap the
//     machine holds per thread (its stack pages written, page tables,
//     the thread table), from n threads to 2.
//
// Run: go test ./kernel -run XXX -bench Threads -count 5
func BenchmarkThreads(b *testing.B) {
	_, img, err := fixtures.Load("posix/many_threads")
	if err != nil {
		b.Fatal(err)
	}
	at := func(b *testing.B, n int) *Kernel {
		b.Helper()
		k, err := New(img, Config{MaxThreads: 1 << 16, MaxMemory: 1 << 40, MaxPPs: 1 << 20, Args: []string{"many_threads", fmt.Sprint(n - 1)}})
		if err != nil {
			b.Fatal(err)
		}
		for len(k.st.threads) < n {
			if ended, bug := k.Ended(); ended {
				b.Fatalf("ended with %d threads: %v", len(k.st.threads), bug)
			}
			if _, err := k.Step(k.Default()); err != nil {
				b.Fatal(err)
			}
		}
		return k
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for _, n := range []int{2, 64, 256, 1024, 4096} {
		b.Run(fmt.Sprintf("threads=%d/snapshot+restore", n), func(b *testing.B) {
			k := at(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k.Restore(k.Snapshot())
			}
			b.StopTimer()
			b.ReportMetric(float64(unsafe.Sizeof(thread{})), "B/thread-entry")
		})
		b.Run(fmt.Sprintf("threads=%d/transition", n), func(b *testing.B) {
			k := at(b, n)
			s := k.Snapshot()
			worker := k.st.threads[len(k.st.threads)-1].tid
			var elapsed time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				tr, err := k.Step(record.Choice{Thread: worker})
				elapsed += time.Since(t0)
				if err != nil || tr.PP.Kind == record.PPEnd {
					b.Fatalf("%v %v", err, tr)
				}
				k.Restore(s)
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/transition")
		})
		b.Run(fmt.Sprintf("threads=%d/runnable", n), func(b *testing.B) {
			k := at(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(k.Runnable()) != n {
					b.Fatal("not every thread runnable")
				}
			}
		})
		if n == 2 {
			continue
		}
		b.Run(fmt.Sprintf("threads=%d/memory", n), func(b *testing.B) {
			var guest, host float64
			for i := 0; i < b.N; i++ {
				h0 := heap()
				k2 := at(b, 2)
				h2 := heap()
				used2 := k2.memoryUsed()
				runtime.KeepAlive(k2)
				k2 = nil
				h1 := heap()
				kn := at(b, n)
				hn := heap()
				guest = float64(kn.memoryUsed()-used2) / float64(n-2)
				host = (float64(hn) - float64(h1) - (float64(h2) - float64(h0))) / float64(n-2)
				runtime.KeepAlive(kn)
			}
			b.ReportMetric(guest, "guest-B/thread")
			b.ReportMetric(host, "host-B/thread")
		})
	}
}
