package check

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion: --version names the commit and its date (and an
// uncommitted tree) from what go build records, a release by its module
// version, and says so when the build recorded nothing (it printed
// "(devel)" alone before).
func TestBuildVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "c64f76aa1efedecb54dec830500ee1670260ee26"},
		{Key: "vcs.time", Value: "2026-11-28T06:03:48Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "c64f76aa1efe+modified (2026-11-28 06:03 UTC)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs[:2]}, "c64f76aa1efe"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs}, "v1.2.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel, built without version control information)"},
	} {
		if got := BuildVersion(&c.bi); got != c.want {
			t.Errorf("BuildVersion(%+v): %q, want %q", c.bi.Main, got, c.want)
		}
	}
}
