package isatest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// rv64iMnemonics are the RV64I instructions (canonical names, as
// llvm-objdump -M no-aliases prints them).
var rv64iMnemonics = []string{
	"lui", "auipc", "jal", "jalr",
	"beq", "bne", "blt", "bge", "bltu", "bgeu",
	"lb", "lh", "lw", "ld", "lbu", "lhu", "lwu",
	"sb", "sh", "sw", "sd",
	"addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srli", "srai",
	"add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
	"addiw", "slliw", "srliw", "sraiw",
	"addw", "subw", "sllw", "srlw", "sraw",
	"fence", "fence.tso", "fence.i", "ecall",
}

// rv64mMnemonics are the RV64M instructions.
var rv64mMnemonics = []string{
	"mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu",
	"mulw", "divw", "divuw", "remw", "remuw",
}

// amoOps are the AMO operations; each must appear in .w and .d forms with
// every ordering suffix.
var amoOps = []string{
	"amoswap", "amoadd", "amoxor", "amoand", "amoor",
	"amomin", "amomax", "amominu", "amomaxu",
}

var orderings = []string{"", ".aq", ".rl", ".aqrl"}

// rv64aMnemonics lists every required A-extension mnemonic.
func rv64aMnemonics() []string {
	var ms []string
	for _, op := range amoOps {
		for _, w := range []string{".w", ".d"} {
			for _, o := range orderings {
				ms = append(ms, op+w+o)
			}
		}
	}
	for _, w := range []string{".w", ".d"} {
		ms = append(ms,
			"lr"+w, "lr"+w+".aq", "lr"+w+".aqrl",
			"sc"+w, "sc"+w+".rl", "sc"+w+".aq", "sc"+w+".aqrl")
	}
	return ms
}

// counterCSRs must each be read with csrrs (rdcycle, rdtime, rdinstret).
var counterCSRs = []string{"cycle", "time", "instret"}

func objdumpBinary(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"llvm-objdump", "llvm-objdump-14"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LANDSLIDE_NO_CLANG") == "1" {
		t.Skip("llvm-objdump not found and LANDSLIDE_NO_CLANG=1")
	}
	t.Fatal("llvm-objdump not found: TestISACoverage disassembles the ISA fixtures with it; " +
		"install LLVM (apt-get install llvm) or set LANDSLIDE_NO_CLANG=1 to skip")
	return ""
}

// insnAddr matches the address and encoding that start an instruction line.
var insnAddr = regexp.MustCompile(`^\s*[0-9a-f]+:(\s[0-9a-f]{2})+\s*$`)

// disassembly is what one objdump listing contains.
type disassembly struct {
	mnemonics map[string]int // canonical mnemonic -> occurrences
	csrReads  map[string]int // CSR name read by csrrs -> occurrences
}

// disassemble runs llvm-objdump -d -M no-aliases over an ELF and counts
// the mnemonics and the CSRs read through csrrs.
func disassemble(t testing.TB, objdump, elf string, into *disassembly) {
	t.Helper()
	cmd := exec.Command(objdump, "-d", "-M", "no-aliases", "--mattr=+m,+a", elf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-objdump %s: %v\n%s", elf, err, stderr.String())
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "   11124: 97 00 00 00  \tauipc\tra, 0"
		fields := strings.Split(line, "\t")
		if len(fields) < 2 || !insnAddr.MatchString(fields[0]) {
			continue
		}
		m := strings.TrimSpace(fields[1])
		if m == "" || strings.HasPrefix(m, "<") {
			continue
		}
		into.mnemonics[m]++
		if m == "csrrs" && len(fields) >= 3 {
			ops := strings.Split(fields[2], ",")
			if len(ops) == 3 && strings.TrimSpace(ops[2]) == "zero" {
				into.csrReads[strings.TrimSpace(ops[1])]++
			}
		}
	}
}

// TestISACoverage checks that the programs compared against qemu (the
// non-trap ISA fixtures) contain every RV64IMA instruction, each AMO in
// both widths with every aq/rl combination, lr/sc in both widths, the
// counter reads, fence, fence.tso, fence.i and ecall.
func TestISACoverage(t *testing.T) {
	objdump := objdumpBinary(t)
	d := &disassembly{mnemonics: map[string]int{}, csrReads: map[string]int{}}
	n := 0
	for _, f := range isaFixtures(t) {
		if isTrap(f) {
			continue
		}
		readELF(t, f) // a clear message when the binary is missing
		disassemble(t, objdump, f.Path(), d)
		n++
	}
	if len(d.mnemonics) == 0 {
		t.Fatal("llvm-objdump printed no instructions")
	}

	var required []string
	required = append(required, rv64iMnemonics...)
	required = append(required, rv64mMnemonics...)
	required = append(required, rv64aMnemonics()...)
	var missing []string
	for _, m := range required {
		if d.mnemonics[m] == 0 {
			missing = append(missing, m)
		}
	}
	for _, c := range counterCSRs {
		if d.csrReads[c] == 0 {
			missing = append(missing, "csrrs <rd>, "+c+", zero")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the ISA fixtures never execute: %s", strings.Join(missing, ", "))
	}

	// Anything unexpected in the differential programs (for instance a
	// compressed or floating-point instruction) would make the comparison
	// test something other than RV64IMA.
	known := map[string]bool{"csrrs": true}
	for _, m := range required {
		known[m] = true
	}
	var extra []string
	for m := range d.mnemonics {
		if !known[m] {
			extra = append(extra, m)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("the ISA fixtures contain instructions outside RV64IMA + counter reads: %v", extra)
	}
	t.Logf("%d programs, %d distinct mnemonics, %d required", n, len(d.mnemonics), len(required))
}
