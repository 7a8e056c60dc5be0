package kernel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"

	"landslide/fixtures"
	"landslide/schedule"
)

// FuzzGuest runs arbitrary bytes as guest code: they replace the code at
// the entry point of a real program (so the kernel sees random
// instructions, random system calls with garbage pointers, wild jumps and
// threads), under a random schedule and a small budget. Whatever the
// guest does, the kernel must neither panic nor run past its budget.
//
//	go test ./kernel -run XXX -fuzz FuzzGuest
func FuzzGuest(f *testing.F) {
	fuzzSetup(f)
	word := func(ws ...uint32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	f.Add(uint64(1), word(0x00000073))                                     // ecall with a7 = 0
	f.Add(uint64(2), word(0x3eb00893, 0x00000073, 0xff9ff06f))             // li a7,1003; ecall; loop
	f.Add(uint64(3), word(0x3ef00893, 0x00000073, 0x3e800893, 0x00000073)) // thread_create garbage; gettid
	f.Add(uint64(4), word(0x3f400893, 0x00000073))                         // li a7,1012 (remove_pages); ecall
	f.Add(uint64(5), word(0x00052503, 0x0000006f))                         // lw a0,0(a0); spin
	f.Add(uint64(6), word(0x3fc00893, 0x00a00533, 0x00000073, 0xff5ff06f)) // malloc in a loop
	f.Fuzz(fuzzOne)
}

var (
	fuzzImage         []byte
	fuzzOff, fuzzRoom uint64
)

func fuzzOne(t *testing.T, seed uint64, code []byte) {
	img, off, room := fuzzImage, fuzzOff, fuzzRoom
	{
		if uint64(len(code)) > room {
			code = code[:room]
		}
		prog := append([]byte(nil), img...)
		copy(prog[off:], code)
		k, err := New(prog, Config{MaxInstructions: 200_000, MaxPPs: 300, MaxMemory: 8 << 20, MaxThreads: 8})
		if err != nil {
			t.Fatal(err)
		}
		o, err := k.Play(schedule.NewRandom(seed))
		if err != nil {
			t.Fatal(err)
		}
		if o.Instructions > 200_000+1 {
			t.Fatalf("ran %d instructions past a budget of 200000", o.Instructions)
		}
		if ended, _ := k.Ended(); !ended && !o.Budget {
			t.Fatal("Play returned before the end without a spent budget")
		}
	}
}

// fuzzSetup finds the code at the entry point of ref/paradise_lost that
// fuzz inputs replace.
func fuzzSetup(tb testing.TB) {
	fx, _ := fixtures.Lookup("ref/paradise_lost")
	img, err := os.ReadFile(fx.Path())
	if err != nil {
		tb.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		tb.Fatal(err)
	}
	var off uint64
	var room uint64
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && ef.Entry >= p.Vaddr && ef.Entry < p.Vaddr+p.Filesz {
			off = p.Off + ef.Entry - p.Vaddr
			room = p.Vaddr + p.Filesz - ef.Entry
		}
	}
	if room < 64 {
		tb.Fatal("no room at the entry point")
	}
	fuzzImage, fuzzOff, fuzzRoom = img, off, room
}
