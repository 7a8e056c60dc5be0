package kernel

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"landslide/fixtures"
	"landslide/schedule"
)

// BenchmarkGuestLoop measures guest instructions per second on the
// CPU-bound fixture bench/loop: our emulator with access tracking off and
// on, and qemu-riscv64 (user mode) on the same binary in the same run.
// Run: go test ./kernel -run XXX -bench GuestLoop -benchtime 3x
func BenchmarkGuestLoop(b *testing.B) {
	f, _ := fixtures.Lookup("bench/loop")
	img, err := os.ReadFile(f.Path())
	if err != nil {
		b.Fatal(err)
	}
	o, err := RunELF(img, Config{NoTrack: true})
	if err != nil || o.Bug != nil {
		b.Fatalf("bench/loop: %v %v", err, o.Bug)
	}
	instr := float64(o.Instructions)
	for _, mode := range []struct {
		name    string
		noTrack bool
	}{{"emulator-notrack", true}, {"emulator-track", false}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := RunELF(img, Config{NoTrack: mode.noTrack}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(instr*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
		})
	}
	b.Run("qemu-riscv64", func(b *testing.B) {
		if _, err := exec.LookPath("qemu-riscv64"); err != nil {
			b.Fatal("qemu-riscv64 not found: apt-get install qemu-user")
		}
		for i := 0; i < b.N; i++ {
			if out, err := exec.Command("qemu-riscv64", f.Path()).Output(); err != nil || string(out) != string(o.Stdout) {
				b.Fatalf("qemu: %v %q", err, out)
			}
		}
		b.ReportMetric(instr*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
	})
}

// BenchmarkParadiseLost compares the cost of one snapshot+restore with the
// cost of an average transition of ref/paradise_lost (default schedule).
// Run: go test ./kernel -run XXX -bench ParadiseLost
func BenchmarkParadiseLost(b *testing.B) {
	f, _ := fixtures.Lookup("ref/paradise_lost")
	img, err := os.ReadFile(f.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("transition", func(b *testing.B) {
		// As an explorer does: one machine (the ELF and DWARF loaded and the
		// code decoded once), restored to its start for each execution.
		var n int
		var elapsed time.Duration
		k, err := New(img, Config{})
		if err != nil {
			b.Fatal(err)
		}
		s0 := k.Snapshot()
		for i := 0; i < b.N; i++ {
			k.Restore(s0)
			start := time.Now()
			o, err := k.Play(schedule.Default{})
			elapsed += time.Since(start)
			if err != nil || o.Bug != nil {
				b.Fatal(err, o.Bug)
			}
			n += len(o.Transitions)
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n), "ns/transition")
	})
	// A machine stopped at the middle PP of the default schedule.
	mid := func(b *testing.B) *Kernel {
		o, _ := RunELF(img, Config{})
		k, _ := New(img, Config{})
		for _, c := range o.Schedule[:len(o.Schedule)/2] {
			k.Step(c)
		}
		return k
	}
	b.Run("snapshot+restore", func(b *testing.B) {
		k := mid(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k.Restore(k.Snapshot())
		}
	})
	// Snapshot, run the next transition (paying the copy-on-write of the
	// pages it writes), restore: the explorer's real pattern.
	b.Run("snapshot+step+restore", func(b *testing.B) {
		k := mid(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s := k.Snapshot()
			k.Step(k.Default())
			k.Restore(s)
		}
	})
}
