// Package sdk is the guest SDK of Landslide and the helper that builds guest
// programs with it.
//
// The SDK itself is C: Pebbles-compatible headers (include/), a crt0 and a
// small libc (lib/), a linker script (linker.ld) and a correct reference P2
// thread library (thrlib/). Build compiles and links a program against it
// with Debian's clang and ld.lld into a static RV64IMA ELF.
//
// Reproducibility: the same sources give the same bytes from any checkout.
// clang always runs in a directory where the SDK is "sdk/", and the
// compilation directory is recorded as ".". Inside the repository
// (Options.Dir holding this module's go.mod and sdk/) that is the repository
// root and the on-disk SDK is used. Elsewhere (landslide cc) the copy
// embedded in the binary is extracted once to
// <user cache>/landslide/sdk-<hash>/sdk/ and clang runs in
// <user cache>/landslide/sdk-<hash>; the program's paths are passed as
// absolute ones and -ffile-prefix-map turns them back into paths relative to
// Options.Dir. DWARF file names and __FILE__ therefore read the same either
// way (e.g. "sdk/thrlib/mutex.c", "tests/foo.c"). Limitation of clang 14:
// the prefix map does not apply to the file names of a program's own .S
// files, so those keep absolute paths outside the repository.
package sdk

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

//go:embed include lib posix thrlib linker.ld
var files embed.FS

// Options says what to build.
type Options struct {
	Sources []string // the program's .c/.S files
	Output  string
	Lib     string // "ref" (reference thread library), "" (none), or a directory of .c files of another thread library
	// Overlay, with Lib "ref", is a directory of files that replace the
	// reference library's files of the same name (a library that differs
	// from the reference in one file, like the seeded-bug fixtures).
	Overlay string
	NoLibc  bool     // no crt0/libc/thread library/linker script: the program supplies _start (ISA tests)
	Include []string // extra -I directories
	CFlags  []string // extra flags, passed as is (use absolute paths in them)
	Dir     string   // working directory for clang (repo root for fixtures); "" = current
	// Posix links the POSIX-threads library (posix/: pthread.h,
	// verifier.h). Build sets it itself when a source includes one of
	// those headers.
	Posix bool
}

// posixHeaders are the headers whose functions live in posix/, the
// SV-COMP functions a program may declare itself without verifier.h, and
// the stdio additions of posix/include/stdio.h.
var posixHeaders = regexp.MustCompile(`(?m)^\s*#\s*include\s*[<"](pthread|verifier)\.h[>"]|\b__VERIFIER_\w+\s*\(|\b(stderr|stdout|fprintf|sscanf|fputs|fputc)\b`)

// localInclude matches an #include "file" line (a header of the program's
// own, next to the source).
var localInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s*"([^"]+)"`)

// usesPosix reports whether a C source, or a header of its own that it
// includes ("file", next to it, at any depth), includes a POSIX-threads
// header, calls an SV-COMP function, or uses the POSIX stdio additions.
func usesPosix(path string) bool {
	seen := map[string]bool{}
	var uses func(p string) bool
	uses = func(p string) bool {
		if seen[p] || len(seen) > 64 {
			return false
		}
		seen[p] = true
		b, err := os.ReadFile(p)
		if err != nil {
			return false
		}
		if posixHeaders.Match(b) {
			return true
		}
		for _, m := range localInclude.FindAllSubmatch(b, -1) {
			if uses(filepath.Join(filepath.Dir(p), string(m[1]))) {
				return true
			}
		}
		return false
	}
	return uses(path)
}

// errNoClang is what Build says when the toolchain is missing.
var errNoClang = errors.New("landslide cc needs clang and ld.lld: apt-get install clang lld")

// Flags returns the fixed compiler and linker flags of every guest build.
func Flags() []string {
	return []string{
		"--target=riscv64-unknown-elf",
		"-march=rv64ima",
		"-mabi=lp64",
		"-g",
		"-O1",
		"-fno-omit-frame-pointer",
		"-ffreestanding",
		"-nostdlib",
		"-fuse-ld=lld",
		"-static",
		"-Wl,--build-id=none",
		"-fdebug-compilation-dir=.",
	}
}

// HaveClang reports whether clang and ld.lld are on the PATH.
func HaveClang() bool {
	if _, err := exec.LookPath("clang"); err != nil {
		return false
	}
	if _, err := exec.LookPath("ld.lld"); err != nil {
		return false
	}
	return true
}

// Build compiles and links one guest program. On a compile or link error the
// returned error holds clang's output.
func Build(opts Options) error {
	if !HaveClang() {
		return errNoClang
	}
	if len(opts.Sources) == 0 {
		return errors.New("sdk: no sources to build")
	}
	if opts.Output == "" {
		return errors.New("sdk: no output file")
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}

	// clang runs where the SDK reads as "sdk/": the repository root, or the
	// cache directory holding the extracted copy. In the latter case the
	// program's own paths are made absolute and renamed back to relative
	// ones with -ffile-prefix-map.
	cwd := absDir
	if !inRepo(absDir) {
		if cwd, err = extract(); err != nil {
			return err
		}
	}
	local := func(p string) string {
		if cwd == absDir || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(absDir, p)
	}
	const root = "sdk"

	args := append([]string{}, Flags()...)
	args = append(args, "-ffile-prefix-map="+absDir+"/=")
	if !opts.NoLibc {
		// NoLibc programs bring their own _start and keep lld's default layout.
		args = append(args, "-T", path.Join(root, "linker.ld"))
	}

	var libDir string
	var srcs []string
	if !opts.NoLibc {
		switch opts.Lib {
		case "":
		case "ref":
			libDir = path.Join(root, "thrlib")
		default:
			libDir = local(opts.Lib)
		}
		libc, err := listSources(cwd, path.Join(root, "lib"))
		if err != nil {
			return err
		}
		srcs = append(srcs, libc...)
		for _, src := range opts.Sources {
			if !filepath.IsAbs(src) {
				src = filepath.Join(absDir, src)
			}
			if strings.HasSuffix(src, ".c") && usesPosix(src) {
				opts.Posix = true
			}
		}
		if opts.Posix {
			posix, err := listSources(cwd, path.Join(root, "posix"))
			if err != nil {
				return err
			}
			srcs = append(srcs, posix...)
		}
		if libDir != "" {
			lib, err := listSources(cwd, libDir)
			if err != nil {
				return fmt.Errorf("sdk: thread library %q: %w", opts.Lib, err)
			}
			if len(lib) == 0 {
				return fmt.Errorf("sdk: thread library %q has no .c or .S files", opts.Lib)
			}
			if opts.Overlay != "" {
				if opts.Lib != "ref" {
					return errors.New("sdk: an overlay applies to the reference library (Lib \"ref\")")
				}
				over, err := listSources(cwd, local(opts.Overlay))
				if err != nil {
					return fmt.Errorf("sdk: overlay %q: %w", opts.Overlay, err)
				}
				lib = overlaySources(lib, over)
			}
			srcs = append(srcs, lib...)
		}
	} else if opts.Lib != "" || opts.Overlay != "" {
		return errors.New("sdk: NoLibc builds take no thread library")
	}

	// A thread library's own headers (mutex_type.h, ...) come first.
	if opts.Overlay != "" {
		args = append(args, "-I", local(opts.Overlay))
	}
	if libDir != "" {
		args = append(args, "-I", libDir)
	}
	for _, inc := range opts.Include {
		args = append(args, "-I", local(inc))
	}
	if opts.Posix {
		// The POSIX library's own additions to SDK headers (stdio.h's
		// streams), which #include_next the SDK's.
		args = append(args, "-I", path.Join(root, "posix", "include"))
	}
	args = append(args, "-I", path.Join(root, "include"))
	args = append(args, opts.CFlags...)
	output := local(opts.Output)
	args = append(args, "-o", output)
	args = append(args, srcs...)
	for _, src := range opts.Sources {
		args = append(args, local(src))
	}

	outPath := output
	if !filepath.IsAbs(outPath) {
		outPath = filepath.Join(cwd, outPath)
	}
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return err
	}

	cmd := exec.Command("clang", args...)
	cmd.Dir = cwd
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: clang %s: %v\n%s", opts.Output, strings.Join(args, " "), err, out.String())
	}
	return nil
}

// inRepo reports whether dir is the root of this module with its sdk/ on disk.
func inRepo(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	isModule := false
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && f[1] == "landslide" {
			isModule = true
			break
		}
	}
	if !isModule {
		return false
	}
	for _, f := range []string{"sdk/sdk.go", "sdk/linker.ld", "sdk/include/landslide_abi.h", "sdk/lib/crt0.S"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// listSources returns the .c and .S files of dir (relative to base unless
// absolute), sorted, named the way clang running in base will see them.
// overlaySources replaces each file of base by the file of the same name
// in over, and adds the files of over that base lacks; sorted by name.
func overlaySources(base, over []string) []string {
	byName := map[string]string{}
	for _, f := range base {
		byName[filepath.Base(f)] = f
	}
	for _, f := range over {
		byName[filepath.Base(f)] = f
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}

func listSources(base, dir string) ([]string, error) {
	full := dir
	if !filepath.IsAbs(full) {
		full = filepath.Join(base, dir)
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		return nil, err
	}
	var srcs []string
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if n := e.Name(); strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".S") {
			srcs = append(srcs, filepath.Join(dir, n))
		}
	}
	sort.Strings(srcs)
	return srcs, nil
}

// extract writes the embedded SDK to a per-content cache directory (once),
// as <cache>/landslide/sdk-<hash>/sdk/..., and returns the absolute path of
// the directory holding "sdk".
func extract() (string, error) {
	var names []string
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]

	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "landslide")
	dst := filepath.Join(parent, "sdk-"+sum)
	if _, err := os.Stat(filepath.Join(dst, "sdk", "linker.ld")); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("sdk: cache directory: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "tmp-sdk-")
	if err != nil {
		return "", fmt.Errorf("sdk: cache directory: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, n := range names {
		b, _ := files.ReadFile(n)
		p := filepath.Join(tmp, "sdk", filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		// Another process may have won the race; its copy is identical.
		if _, serr := os.Stat(filepath.Join(dst, "sdk", "linker.ld")); serr == nil {
			return dst, nil
		}
		return "", fmt.Errorf("sdk: cache directory: %w", err)
	}
	return dst, nil
}
