package dpor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStrategiesSeeOnlyThePath: every file that registers a strategy,
// and races.go, the race machinery they share, use the exploration only
// through Path: none names the Explorer, so the explorer's state can
// change (or a subtree go to another worker) without touching them.
// Each registered strategy is found in one of those files.
func TestStrategiesSeeOnlyThePath(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string // strategy names registered in the files checked
	checked := 0
	for name, f := range pkgs["dpor"].Files {
		var names []string
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := call.Fun.(*ast.Ident)
			if !ok || fn.Name != "register" && fn.Name != "registerInfo" {
				return true
			}
			ast.Inspect(call, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Name") {
					if lit, ok := kv.Value.(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						names = append(names, s)
					}
				}
				return true
			})
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && fn.Name == "register" {
				s, _ := strconv.Unquote(lit.Value)
				names = append(names, s)
			}
			return true
		})
		if len(names) == 0 && !strings.HasSuffix(name, "races.go") {
			continue
		}
		checked++
		found = append(found, names...)
		ast.Inspect(f, func(n ast.Node) bool {
			if isIdent(n, "Explorer") {
				t.Errorf("%s: a strategy names the Explorer: use Path", fset.Position(n.Pos()))
			}
			return true
		})
	}
	for _, st := range Strategies() {
		if !slices.Contains(found, st.Name) {
			t.Errorf("strategy %q is registered outside the files checked", st.Name)
		}
	}
	if checked < 9 {
		t.Errorf("checked %d files, want the 8 strategy files and races.go", checked)
	}
}

func isIdent(n ast.Node, name string) bool {
	id, ok := n.(*ast.Ident)
	return ok && id.Name == name
}
