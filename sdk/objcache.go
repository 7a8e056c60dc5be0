package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// The object cache: the SDK's and a thread library's sources compile to
// the same object for every program built with the same flags, so a
// build reuses the object of an earlier one (the fixtures' rebuild
// compiles the SDK once instead of for each of its ~290 programs). An
// object is keyed by everything that can change it: clang's version, the
// compile's arguments, the source, and every header of the source's own
// directory, of the SDK and of the include directories (recursively;
// clang's own headers go with its version). Objects live
// in the user's cache directory (landslide/obj/KEY.o), written to a
// temporary file and renamed, so concurrent builds share them safely.
// The program's own sources are never cached.

var clangVersion = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("clang", "--version").Output()
	return string(out), err
})

// objCacheDir is the cache's directory ("" when there is none: every
// object is compiled), as the environment says at each compile (a test
// that moves the user's cache directory moves it).
func objCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir = filepath.Join(dir, "landslide", "obj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// cachedCompile makes obj for src (relative to cwd) with clang args
// (without -o and the source), from the cache when it holds it; it
// returns the object's path (the cache's, or obj).
func cachedCompile(cwd, output, src, obj string, args, incDirs []string) (string, error) {
	dir := objCacheDir()
	key, err := objectKey(cwd, src, args, incDirs)
	if dir == "" || err != nil {
		return obj, clang(cwd, output, append(append(args, "-o", obj), src))
	}
	cached := filepath.Join(dir, key+".o")
	if _, err := os.Stat(cached); err == nil {
		return cached, nil
	}
	if err := clang(cwd, output, append(append(args, "-o", obj), src)); err != nil {
		return "", err
	}
	b, err := os.ReadFile(obj)
	if err != nil {
		return obj, nil
	}
	tmp, err := os.CreateTemp(dir, "tmp-*.o")
	if err != nil {
		return obj, nil
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), cached) != nil {
		os.Remove(tmp.Name())
	}
	return obj, nil
}

// objectKey hashes what an object depends on.
func objectKey(cwd, src string, args, incDirs []string) (string, error) {
	ver, err := clangVersion()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", ver, strings.Join(args, "\x01"), src)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	b, err := os.ReadFile(abs(src))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%d\x00", len(b))
	h.Write(b)
	// The whole SDK's headers too: its sources reach one another's
	// directories ("../lib/ls_syscall.h").
	dirs := append([]string{filepath.Dir(abs(src)), "sdk"}, incDirs...)
	for i, d := range dirs {
		var files []string
		root := abs(d)
		recurse := i > 0 // the source's own directory: its headers only
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && p != root && !recurse {
				return filepath.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(p, ".h") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		sort.Strings(files)
		fmt.Fprintf(h, "dir %s\x00", d)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			rel, _ := filepath.Rel(root, f)
			fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}
