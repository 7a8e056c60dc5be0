package kernel

import (
	"fmt"
	"strings"
	"testing"

	"landslide/record"
)

// TestDataName names a global, a live heap block by the function that
// allocated it, and a thread's stack, as the machine has them after
// paraguay's first transition (main in thr_create: it allocated block 1,
// "allocated block 1.1 at 0x2000000010", and created thread 2).
func TestDataName(t *testing.T) {
	k, err := New(fixtureImage(t, "ref/paraguay"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := k.Step(record.Choice{Thread: 1})
	if err != nil {
		t.Fatal(err)
	}
	var block uint64
	for _, e := range tr.Sync {
		if e.Kind == record.SyncAlloc {
			block = e.Arg
			break
		}
	}
	if block == 0 {
		t.Fatalf("the first transition allocated nothing: %v", tr.Sync)
	}
	m, _, ok := k.syms.Lookup("m")
	if !ok {
		t.Fatal("no global m")
	}
	main := k.st.threads[0]
	if main.stackLo >= main.stackHi {
		t.Fatal("the main thread's stack is not known")
	}
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{m, "m"},
		{m + 4, "m+4"},
		{block, "heap block 1 from thr_create"},
		{block + 8, "heap block 1 from thr_create+8"},
		{main.stackHi - 8, "thread 1's stack"},
		{0x10, ""},
	} {
		if got := k.DataName(c.addr); got != c.want {
			t.Errorf("DataName(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	// Stack slots by the function whose frame holds them. In the next
	// transition thread 1 stops inside thread_create, past its prologue:
	// by the ABI's frame record, s0 is the frame's CFA, with the return
	// address at s0-8 and the caller's s0 (its own CFA) at s0-16.
	if _, err := k.Step(record.Choice{Thread: 1}); err != nil {
		t.Fatal(err)
	}
	x := &k.cpu.X
	fp := x[8]
	if fn := k.funcName(k.cpu.PC); fn != "thread_create" || fp <= x[2] {
		t.Fatalf("thread 1 stopped in %s (sp %#x, s0 %#x), not inside thread_create's body", fn, x[2], fp)
	}
	ra, _ := k.mem.Read64(fp - 8)
	callerCFA, _ := k.mem.Read64(fp - 16)
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{x[2], fmt.Sprintf("thread_create's frame-%d on thread 1's stack", fp-x[2])},
		{fp - 8, "thread_create's frame-8 on thread 1's stack"},
		{fp + 8, fmt.Sprintf("%s's frame-%d on thread 1's stack", k.funcName(ra-4), callerCFA-fp-8)},
		{x[2] - 8, "thread 1's stack"}, // below sp: no frame
	} {
		if got := k.DataName(c.addr); got != c.want {
			t.Errorf("DataName(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	if got := k.addrText(0x10); !strings.HasPrefix(got, "0x") {
		t.Errorf("addrText(0x10) = %q, want the number", got)
	}
}
