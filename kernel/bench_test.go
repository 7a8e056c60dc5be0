package kernel

import (
	"os"
	"os/exec"
	"testing"

	"landslide/fixtures"
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
