// Package isatest is the differential ISA test suite: it checks the
// emulator's RV64IMA (+ Zicsr counter reads, fence, fence.i) semantics
// against QEMU's user-mode emulator, qemu-riscv64.
//
// The guest programs are the "isa/..." fixtures (see fixtures/isa.go and
// fixtures/src/isa/). Each one is freestanding: its own _start, output only
// through the Linux write syscall, exit through the Linux exit syscall, so
// the same ELF runs unchanged under qemu-riscv64 and under kernel.RunELF.
// Each prints one line per case ("divw 80000000 ffffffff ->
// ffffffff80000000") and self-checks the values the spec fixes, exiting
// with the number of failed self-checks.
//
// TestISAAgainstQEMU runs every fixture under both and requires identical
// standard output and exit status; on a mismatch it reports the first
// differing line. The "isa/trap_*" fixtures end in a fault instead: qemu
// must die (SIGILL, SIGSEGV, SIGBUS, or "unhandled CPU exception" for a
// misaligned jump target), our emulator must report a bug whose kind is the
// fixture's Expect, and the output before the fault must match.
//
// qemu runs with -cpu rv64,f=off,d=off,c=off so that it implements the same
// ISA as our emulator: without F/D a floating-point instruction is illegal
// and without C a jump to an address that is 2 modulo 4 is misaligned.
//
// TestISACoverage disassembles the fixtures with llvm-objdump -M no-aliases
// and checks that every RV64IMA instruction (each AMO in both widths and
// with every aq/rl combination, lr/sc in both widths, csrrs of cycle, time
// and instret, fence, fence.tso, fence.i, ecall) occurs in the programs that
// the differential test compares, so the suite provably covers the ISA.
//
// Missing tools fail the tests: qemu-riscv64 (install qemu-user) unless
// LANDSLIDE_NO_QEMU=1, in which case only the emulator half runs, against
// the programs' self-checks; llvm-objdump unless LANDSLIDE_NO_CLANG=1.
//
// The fixture binaries are committed; regenerate them with
// go run ./fixtures/cmd/build.
package isatest
