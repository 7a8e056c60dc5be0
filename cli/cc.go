package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"

	"github.com/spf13/cobra"

	"landslide/sdk"
)

func newCCCmd() *cobra.Command {
	var opts sdk.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cc -o PROGRAM.elf SOURCE.c [SOURCE...]",
		Short: "Build a guest test program against the SDK (needs clang and ld.lld)",
		Long: `cc compiles C (and .S) sources for the guest: RV64IMA, freestanding, with the
SDK's Pebbles-compatible headers, crt0 and libc, linked with the reference
thread library (--lib ref, the default), none (--lib none), a directory
holding your own thread library's .c files (--lib DIR), or the reference
library with some of its files replaced by yours (--overlay DIR: each .c
or .S file of DIR replaces the reference file of the same name, the others
are added, and DIR's headers come first).`,
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
				Output  string   `json:"output"`
				Bytes   int      `json:"bytes"`
				SHA256  string   `json:"sha256"`
				Sources []string `json:"sources"`
				Lib     string   `json:"lib"`
				Overlay string   `json:"overlay,omitempty"`
			}{opts.Output, len(img), hex.EncodeToString(sum[:]), opts.Sources, lib, opts.Overlay})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "the ELF to write")
	fl.StringVar(&opts.Lib, "lib", "ref", `thread library: "ref", "none", or a directory of .c files`)
	fl.StringVar(&opts.Overlay, "overlay", "", "build the reference library with this directory's files replacing those of the same name")
	fl.StringSliceVarP(&opts.Include, "include", "I", nil, "extra include directories")
	fl.StringSliceVar(&opts.CFlags, "cflag", nil, "extra compiler flags")
	fl.BoolVar(&asJSON, "json", false, "print what was built as JSON")
	return cmd
}
