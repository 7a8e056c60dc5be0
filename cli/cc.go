package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"landslide/sdk"
)

func newCCCmd() *cobra.Command {
	var opts sdk.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cc -o PROGRAM.elf SOURCE.c|.i|.cc [SOURCE...]",
		Short: "Build a guest test program against the SDK (needs clang and ld.lld)",
		Long: `cc compiles C (and .S) sources for the guest: RV64IMA, freestanding, with the
SDK's Pebbles-compatible headers, crt0 and libc, linked with the reference
thread library (--lib ref, the default), none (--lib none), a directory
holding your own thread library's .c files (--lib DIR), or the reference
library with some of its files replaced by yours (--overlay DIR: each .c
or .S file of DIR replaces the reference file of the same name, the others
are added, and DIR's headers come first).

A .i source (preprocessed C, as SV-COMP's tasks are) is preprocessed
again; glibc's x86-only regparm attribute is dropped and the glibc
functions such a program calls (__assert_fail) are provided.

C++ sources (.cc, .cpp, .cxx) are compiled without exceptions or RTTI
against the SDK's own C++ library: <atomic>, <thread>, <mutex>,
<condition_variable>, <new>, <utility>, <type_traits> and the <c...>
wrappers of the C headers (README, "C++"). Global constructors run before
main; a header outside the library fails the build with its name.

Your own sources are compiled at -O0, the SDK's (crt0, libc, the POSIX and
thread libraries, --lib, --overlay) at -O1. A verdict must never rest on
what the compiler deleted: on plain (non-atomic) shared variables clang at
-O1 may fold a racy "r = r + 1; r = r - 1" into nothing, or drop the check
of "y = x; assert(y == x)", as C allows in a program with a data race, and
the checker would then verify a program whose source has the bug. At -O0
every load and store your source writes is in the binary. --cflag flags go
to every source after these levels: --cflag -O1 builds your sources
optimised again (the last -O wins). cc says on stderr which levels it
used, and in --json (program_opt, sdk_opt).`,
		Args: atLeast(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Output == "" {
				return usageErr("cc: -o PROGRAM.elf is required")
			}
			if opts.Lib == "none" {
				opts.Lib = ""
			}
			if opts.Overlay != "" && opts.Lib != "ref" {
				return usageErr("cc: --overlay replaces files of the reference library: it cannot be combined with --lib %s", opts.Lib)
			}
			opts.Sources = args
			if err := sdk.Build(opts); err != nil {
				return usageErr("cc: %v", err)
			}
			progOpt, libOpt := opts.OptLevels()
			note := buildNote(progOpt, libOpt)
			fmt.Fprintf(cmd.ErrOrStderr(), "landslide: cc: %s\n", note)
			if !asJSON {
				return nil
			}
			img, err := os.ReadFile(opts.Output)
			if err != nil {
				return usageErr("cc: %v", err)
			}
			sum := sha256.Sum256(img)
			lib := opts.Lib
			if lib == "" {
				lib = "none"
			}
			return writeJSON(cmd.OutOrStdout(), struct {
				Output     string   `json:"output"`
				Bytes      int      `json:"bytes"`
				SHA256     string   `json:"sha256"`
				Sources    []string `json:"sources"`
				Lib        string   `json:"lib"`
				Overlay    string   `json:"overlay,omitempty"`
				ProgramOpt string   `json:"program_opt"`
				SDKOpt     string   `json:"sdk_opt"`
				Build      string   `json:"build"`
			}{opts.Output, len(img), hex.EncodeToString(sum[:]), opts.Sources, lib, opts.Overlay, progOpt, libOpt, note})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "the ELF to write")
	fl.StringVar(&opts.Lib, "lib", "ref", `thread library: "ref", "none", or a directory of .c files`)
	fl.StringVar(&opts.Overlay, "overlay", "", "build the reference library with this directory's files replacing those of the same name")
	fl.StringSliceVarP(&opts.Include, "include", "I", nil, "extra include directories")
	fl.StringSliceVar(&opts.CFlags, "cflag", nil, "extra compiler flags, for every source (--cflag -O1 optimises your sources, built at -O0 by default)")
	fl.BoolVar(&asJSON, "json", false, "print what was built as JSON")
	return cmd
}

// buildNote is the line that says at which levels a program was built
// (landslide cc and suite).
func buildNote(program, lib string) string {
	if program == sdk.DefaultProgramOpt {
		return fmt.Sprintf("program built at %s, every shared load and store of its source kept (a verdict never rests on what the compiler deleted), the SDK at %s; --cflag -O1 optimises the program", program, lib)
	}
	return fmt.Sprintf("program built at %s (--cflag), the compiler may have deleted or merged its accesses to plain shared variables, the SDK at %s; without an -O flag the program is built at %s", program, lib, sdk.DefaultProgramOpt)
}
