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
//
// C++: a program's .cc, .cpp and .cxx sources are compiled as C++ without
// exceptions or RTTI (CxxFlags) against the SDK's own C++ headers
// (include/c++: <atomic>, <thread>, <mutex>, <condition_variable>, the
// <c...> wrappers, and every C header of the SDK with C linkage), and such
// a program links the C++ runtime (cxxrt/: operator new and delete, guards
// of static locals, global constructors before main) and the POSIX
// threads.
//
// Optimisation: the program's own sources are compiled at -O0 by default
// (DefaultProgramOpt) and the SDK at -O1 (SDKOpt). On plain shared
// variables clang may fold a racy "r = r + 1; r = r - 1" or the assert
// of "y = x; assert(y == x)", which it is allowed to do in a program with a
// data race; a checker that verified the optimised binary would verify a
// program whose source has the bug. At -O0 every load and store the source
// writes is in the binary, so a verdict never rests on what the compiler
// deleted. The SDK (crt0, libc, posix/, the thread library) is the
// checker's own code and keeps -O1. A build compiles each source on its
// own (the SDK's objects from the object cache where it holds them,
// objcache.go), and links them in the order of one clang invocation over
// all the sources, which gives the same ELF byte for byte.
// Options.ProgramOpt set to SDKOpt builds everything at -O1, as the
// fixtures are built. Options.CFlags come after either level, in both
// compile steps, so "-O1" there builds the program at -O1 again (the last
// -O wins).
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
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:embed include lib posix thrlib cxxrt glibc linker.ld
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
	// ProgramOpt is the optimisation flag of the program's own Sources
	// ("-O0", "-O1", "-O2", "-Os", ...). "" means DefaultProgramOpt, -O0:
	// every shared load and store of the source stays in the binary. The
	// SDK's sources are always compiled at SDKOpt. With ProgramOpt equal
	// to SDKOpt the whole program is built at -O1 (the fixtures' builds:
	// fixtures.Fixture.BuildOptions). An -O flag in
	// CFlags overrides both (the last -O wins); OptLevels says what a
	// build uses.
	ProgramOpt string
}

const (
	// DefaultProgramOpt is the optimisation level of a program's own
	// sources unless Options.ProgramOpt says otherwise: -O0, so that the
	// compiler deletes none of the shared accesses the source makes.
	DefaultProgramOpt = "-O0"
	// SDKOpt is the optimisation level of the SDK's sources (crt0, libc,
	// posix/, the thread library, an overlay).
	SDKOpt = "-O1"
)

// optFlag matches a clang optimisation flag.
var optFlag = regexp.MustCompile(`^-O([0-9]+|s|z|g|fast)?$`)

// OptLevels returns the optimisation flags a build with opts gives the
// program's own sources and the SDK's: ProgramOpt (DefaultProgramOpt when
// empty) and SDKOpt, each overridden by the last -O flag of CFlags.
func (o Options) OptLevels() (program, lib string) {
	program, lib = o.ProgramOpt, SDKOpt
	if program == "" {
		program = DefaultProgramOpt
	}
	for _, f := range o.CFlags {
		if optFlag.MatchString(f) {
			program, lib = f, f
		}
	}
	return program, lib
}

// posixHeaders are the headers whose functions live in posix/, the
// SV-COMP functions a program may declare itself without verifier.h, the
// stdio additions of posix/include/stdio.h, and a call of a pthread
// function (a program preprocessed against glibc's headers has no
// #include left).
var posixHeaders = regexp.MustCompile(`(?m)^\s*#\s*include\s*[<"](pthread|verifier)\.h[>"]|\b__VERIFIER_\w+\s*\(|\b(stderr|stdout|fprintf|sscanf|fputs|fputc)\b|\bpthread_[a-z_]+\s*\(`)

// glibcEntries are the functions of glibc that a program preprocessed
// against glibc's headers (SV-COMP's and SCTBench's .i files) calls
// where its macros expanded, which glibc/glibc.c provides: assert's.
var glibcEntries = regexp.MustCompile(`\b__assert(_fail|_perror_fail)?\s*\(`)

// compatDefines are given to a program's own sources: glibc's x86
// declarations in a preprocessed program (__attribute__ ((__regparm__
// (1))), which clang refuses on RISC-V) lose the attribute, and GCC's
// __malloc__ (deallocator, n) (glibc 2.34's headers; clang takes only the
// plain __malloc__) loses its arguments. Unused, they change nothing.
var compatDefines = []string{"-D__regparm__(n)=", "-D__malloc__(...)=__malloc__"}

// localInclude matches an #include "file" line (a header of the program's
// own, next to the source).
var localInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s*"([^"]+)"`)

// usesPosix reports whether a C source, or a header of its own that it
// includes ("file", next to it, at any depth), includes a POSIX-threads
// header, calls an SV-COMP function, or uses the POSIX stdio additions.
func usesPosix(path string) bool { return uses(path, posixHeaders) }

// usesGlibc reports whether a C source (or a header of its own) calls
// one of glibc's functions that glibc/ provides.
func usesGlibc(path string) bool { return uses(path, glibcEntries) }

// errnoEntry is glibc's errno (errno.h's macro expands to a call of it),
// which glibc/errno.c provides, a thread-local int per thread.
var errnoEntry = regexp.MustCompile(`\b__errno_location\s*\(`)

// uses reports whether a source, or a header of its own that it includes
// ("file", next to it, at any depth), matches re.
func uses(path string, re *regexp.Regexp) bool {
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
		if re.Match(b) {
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

// isC reports whether a source is C: .c, or .i (preprocessed).
func isC(src string) bool { return strings.HasSuffix(src, ".c") || strings.HasSuffix(src, ".i") }

// IsCxx reports whether a source is C++, by its extension (.cc, .cpp,
// .cxx).
func IsCxx(src string) bool {
	switch filepath.Ext(src) {
	case ".cc", ".cpp", ".cxx":
		return true
	}
	return false
}

// CxxFlags are the flags of every C++ source, besides Flags without
// -ffreestanding (under which C++'s main is an ordinary function): no
// exceptions, no RTTI (the guest has neither runtime), no host C++
// headers (the SDK's are in sdk/include/c++), and no library function
// taken for a builtin, as -ffreestanding implies for C.
var CxxFlags = []string{"-fno-exceptions", "-fno-rtti", "-nostdinc++", "-fno-builtin"}

// langFlags are the flags of cflags for a source of one language: a
// -std= of the other language's (-std=c++20 for a C source, -std=c11
// for a C++ one) is left out, so that one --cflag -std=... sets the
// standard of the sources it can apply to, the SDK's C included.
func langFlags(cflags []string, cxx bool) []string {
	var out []string
	for _, f := range cflags {
		if std, ok := strings.CutPrefix(f, "-std="); ok && (strings.Contains(std, "++") != cxx) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// CxxHeaders are the C++ library headers of the SDK (include/c++).
var CxxHeaders = []string{"<atomic>", "<thread>", "<mutex>", "<condition_variable>", "<functional>", "<new>", "<utility>",
	"<type_traits>", "<cassert>", "<cstdio>", "<cstdlib>", "<cstring>", "<cstdint>", "<cstddef>", "<climits>", "<cstdarg>"}

// errNoClang is what Build says when the toolchain is missing.
var errNoClang = errors.New("landslide cc needs clang and ld.lld: apt-get install clang lld")

// Flags returns the fixed compiler and linker flags of every guest build,
// with the SDK's optimisation level, SDKOpt (the program's own sources get
// Options.ProgramOpt in its place).
func Flags() []string { return flags(SDKOpt) }

// flags is Flags with the optimisation flag opt.
func flags(opt string) []string {
	return []string{
		"--target=riscv64-unknown-elf",
		"-march=rv64ima",
		"-mabi=lp64",
		"-g",
		opt,
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

	progOpt := opts.ProgramOpt
	if progOpt == "" {
		progOpt = DefaultProgramOpt
	}
	if !optFlag.MatchString(progOpt) {
		return fmt.Errorf("sdk: ProgramOpt %q is not an optimisation flag (-O0, -O1, -O2, -Os, ...)", opts.ProgramOpt)
	}
	prefixMap := "-ffile-prefix-map=" + absDir + "/="
	var script []string
	if !opts.NoLibc {
		// NoLibc programs bring their own _start and keep lld's default layout.
		script = []string{"-T", path.Join(root, "linker.ld")}
	}

	var libDir string
	var srcs []string
	cxx := slices.ContainsFunc(opts.Sources, IsCxx)
	if cxx && opts.NoLibc {
		return errors.New("sdk: C++ sources need the SDK's runtime (not NoLibc)")
	}
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
		glibc, errno := false, false
		for _, src := range opts.Sources {
			if !filepath.IsAbs(src) {
				src = filepath.Join(absDir, src)
			}
			if isC(src) && usesPosix(src) {
				opts.Posix = true
			}
			if isC(src) && usesGlibc(src) {
				glibc = true
			}
			if isC(src) && uses(src, errnoEntry) {
				errno = true
			}
		}
		if glibc {
			srcs = append(srcs, path.Join(root, "glibc", "glibc.c"))
		}
		if errno {
			srcs = append(srcs, path.Join(root, "glibc", "errno.c"))
		}
		if cxx {
			// The C++ runtime, and the POSIX threads under <thread>.
			srcs = append(srcs, path.Join(root, "cxxrt", "cxxrt.cc"))
			opts.Posix = true
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
	var incs []string
	if opts.Overlay != "" {
		incs = append(incs, "-I", local(opts.Overlay))
	}
	if libDir != "" {
		incs = append(incs, "-I", libDir)
	}
	for _, inc := range opts.Include {
		incs = append(incs, "-I", local(inc))
	}
	if opts.Posix {
		// The POSIX library's own additions to SDK headers (stdio.h's
		// streams), which #include_next the SDK's.
		incs = append(incs, "-I", path.Join(root, "posix", "include"))
	}
	incs = append(incs, "-I", path.Join(root, "include"))
	// C++ sources see the SDK's C++ headers first (sdk/include/c++: the
	// library and the C headers with C linkage), and nothing of the host's.
	cxxIncs := append([]string{"-I", path.Join(root, "include", "c++")}, incs...)
	var progSrcs []string
	for _, src := range opts.Sources {
		progSrcs = append(progSrcs, local(src))
	}
	output := local(opts.Output)

	outPath := output
	if !filepath.IsAbs(outPath) {
		outPath = filepath.Join(cwd, outPath)
	}
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return err
	}

	// Each source compiles on its own, the SDK's (and the thread
	// library's) at SDKOpt through the object cache (objcache.go), the
	// program's at progOpt (CFlags after either, in both), into a
	// temporary directory; then one link in the order of clang's one-step
	// build: the SDK, then the program. The ELF is the one-step build's,
	// byte for byte (the fixtures' rebuild checks it): the objects' names
	// do not reach it. Each step is given the flags of the others (linker
	// flags to a compile, -D and -I from CFlags to the link), which clang
	// would call unused: a warning that --cflag -Werror must not turn
	// into an error the one-step build never had.
	const quiet = "-Wno-unused-command-line-argument"
	tmp, err := os.MkdirTemp("", "landslide-cc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	type unit struct {
		src, opt, obj string
	}
	var units []unit
	for _, src := range srcs {
		units = append(units, unit{src, SDKOpt, ""})
	}
	for _, src := range progSrcs {
		units = append(units, unit{src, progOpt, ""})
	}
	nlib := len(srcs)
	dirsOf := func(incs []string) []string {
		var dirs []string
		for k := 0; k+1 < len(incs); k += 2 {
			dirs = append(dirs, incs[k+1])
		}
		return dirs
	}
	errs := make([]error, len(units))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range units {
		u := &units[i]
		u.obj = filepath.Join(tmp, fmt.Sprintf("%03d.o", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			args := append(flags(u.opt), quiet, prefixMap)
			inc := incs
			if IsCxx(u.src) {
				// Hosted: under -ffreestanding C++'s main is an
				// ordinary function (mangled, no implicit return 0).
				args = slices.DeleteFunc(args, func(f string) bool { return f == "-ffreestanding" })
				args = append(args, CxxFlags...)
				inc = cxxIncs
			}
			args = append(args, inc...)
			args = append(args, langFlags(opts.CFlags, IsCxx(u.src))...)
			args = append(args, "-c")
			if i < nlib {
				u.obj, errs[i] = cachedCompile(cwd, opts.Output, u.src, u.obj, args, dirsOf(inc))
				return
			}
			args = append(args, compatDefines...)
			if strings.HasSuffix(u.src, ".i") {
				// Preprocessed already, but run through the
				// preprocessor again for compatDefines. A plain
				// "inline" function keeps an external definition, as
				// under GNU C89 (SV-COMP's tasks call some that C99
				// would leave undefined at -O0).
				args = append(args, "-x", "c", "-fgnu89-inline")
			}
			errs[i] = clang(cwd, opts.Output, append(args, "-o", u.obj, u.src))
			if errs[i] != nil && IsCxx(u.src) && strings.Contains(errs[i].Error(), "file not found") {
				errs[i] = fmt.Errorf("%w\nlandslide cc: the guest's C++ library has only %s (sdk/include/c++), and the SDK's C headers", errs[i], strings.Join(CxxHeaders, ", "))
			}
		}()
	}
	wg.Wait()
	// The program's errors first (they are the user's), then the SDK's
	// first one.
	for _, err := range append(errs[nlib:], errs[:nlib]...) {
		if err != nil {
			return err
		}
	}
	args := append(Flags(), quiet)
	args = append(args, script...)
	if cxx {
		args = append(args, "-Wl,--wrap=main") // global constructors first (cxxrt's __wrap_main)
	}
	args = append(args, langFlags(opts.CFlags, false)...)
	args = append(args, "-o", output)
	for _, u := range units {
		args = append(args, u.obj)
	}
	return clang(cwd, opts.Output, args)
}

// clang runs clang with args in dir; an error holds its output. output
// names the program being built, for the message.
func clang(dir, output string, args []string) error {
	cmd := exec.Command("clang", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: clang %s: %v\n%s", output, strings.Join(args, " "), err, out.String())
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
