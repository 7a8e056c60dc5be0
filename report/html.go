package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// The HTML preemption trace (thesis §3.1.5): a self-contained page (inline
// CSS, no script, no external resource) with a summary (id "summary"), one
// table (id "trace") with a "#" column and one column per thread, one row
// per transition, a legend and the replay command. Every string goes
// through html/template, so guest-controlled text (bug messages, symbol
// names) is escaped.

// htmlView is what the template sees.
type htmlView struct {
	T        *Trace
	Cols     []int32
	Rows     []htmlRow
	Size     string
	Coverage string
	Failure  int // index of the failing step, -1 if none
	Legend   []legendItem
	BugStack []htmlFrame // the bug's stack, with source
	Races    []htmlRace
}

// htmlFrame is a frame with the source lines around it (none when the
// source is not readable).
type htmlFrame struct {
	Frame Frame
	Src   []SourceLine
}

// htmlRace is a race candidate with both stacks' source context.
type htmlRace struct {
	Race Race
	A, B []htmlFrame
}

// sourceContextLines is how many lines of source the HTML report shows
// on each side of a frame's line.
const sourceContextLines = 2

type htmlRow struct {
	Step  Step
	Class string
	Cells []bool // one per column: true for the running thread's cell
	Kind  string // CSS-safe PP kind
}

type legendItem struct {
	Kind, Label, Text string
}

var ppLegend = []legendItem{
	{"yield", "yield", "the thread called yield"},
	{"deschedule", "deschedule", "the thread blocked (or called deschedule)"},
	{"thread_create", "thread_create", "the thread created another thread"},
	{"thread_exit", "thread_exit", "the thread exited"},
	{"make_runnable", "make_runnable", "the thread woke another thread"},
	{"sleep", "sleep", "the thread called sleep"},
	{"sync_function", "mutex_lock", "entry of a synchronisation function in the PP set (labelled with its name)"},
	{"data_race", "data race", "an access that races with another thread's access (both accesses are shown)"},
	{"annotation", "annotation", "tell_landslide_preempt() in the program"},
	{"end", "end", "the execution ended here (exit or bug)"},
}

// PPClass is the CSS class, besides "pp", of the badge of a PP of this
// kind in the HTML report.
func PPClass(kind string) string { return "pp-" + cssIdent(kind) }

// cssIdent keeps the characters of s that are safe in a class name.
func cssIdent(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// rowClass is the class attribute of a step's row.
func rowClass(s Step) string {
	var cls []string
	if s.Preempted {
		cls = append(cls, "preempted")
	}
	if s.Failure {
		cls = append(cls, "failure")
	}
	return strings.Join(cls, " ")
}

func (t *Trace) htmlView() *htmlView {
	v := &htmlView{T: t, Cols: t.Columns(), Size: formatSize(t.EstimatedSize),
		Coverage: formatCoverage(t.Coverage), Failure: -1, Legend: ppLegend}
	col := map[int32]int{}
	for i, c := range v.Cols {
		col[c] = i
	}
	cache := map[string][]string{}
	frames := func(fs []Frame) []htmlFrame {
		var out []htmlFrame
		for _, f := range fs {
			out = append(out, htmlFrame{Frame: f, Src: sourceContext(cache, f.File, f.Line, sourceContextLines)})
		}
		return out
	}
	if t.Bug != nil {
		v.BugStack = frames(t.Bug.Stack)
	}
	for _, r := range t.Races {
		v.Races = append(v.Races, htmlRace{Race: r, A: frames(r.A.Stack), B: frames(r.B.Stack)})
	}
	for _, s := range t.Steps {
		cells := make([]bool, len(v.Cols))
		cells[col[s.Thread]] = true
		v.Rows = append(v.Rows, htmlRow{Step: s, Class: rowClass(s), Cells: cells, Kind: cssIdent(s.PPKind)})
		if s.Failure && v.Failure < 0 {
			v.Failure = s.Index
		}
	}
	return v
}

var traceTemplate = template.Must(template.New("trace").Funcs(template.FuncMap{
	"hex":  func(pc uint64) string { return fmt.Sprintf("0x%08x", pc) },
	"race": raceText,
}).Parse(traceHTML))

// WriteHTML writes the trace as a self-contained HTML page.
func (t *Trace) WriteHTML(w io.Writer) error {
	return traceTemplate.Execute(w, t.htmlView())
}

const traceHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{if .T.Bug}}Landslide: {{.T.Bug.Kind}} bug{{else}}Landslide: trace{{end}}{{with .T.Program}} in {{.}}{{end}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
code, pre, .frame { font-family: ui-monospace, monospace; font-size: 0.85em; }
h1 { margin: 0 0 0.3em 0; }
h1.bug { color: #b00020; }
.bug-message { white-space: pre-wrap; font-family: ui-monospace, monospace; background: #fff0f0; border-left: 4px solid #b00020; padding: 0.4em 0.8em; }
.stack { margin: 0.3em 0 0.8em 1em; }
.frame { display: block; white-space: pre-wrap; overflow-wrap: anywhere; }
.frame .pc { color: #888; }
.frame .loc { color: #055; }
dl.counts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.counts dt { font-weight: bold; }
dl.counts dd { margin: 0; }
.detail { border: 1px solid #ddd; padding: 0.3em 0.8em; margin: 0.5em 0; }
.detail h3 { margin: 0.2em 0; font-size: 1em; }
/* The table fits the window whatever the number of threads: fixed
   layout, equal thread columns, long frames wrap. So every column, the
   failing thread's included, is on screen at any window width. */
table#trace { border-collapse: collapse; margin: 1em 0; table-layout: fixed; width: 100%; }
table#trace th, table#trace td { border: 1px solid #ccc; padding: 0.3em 0.5em; vertical-align: top; text-align: left; overflow-wrap: anywhere; }
table#trace thead th:first-child { width: 6.5em; }
table#trace thead th { background: #eee; position: sticky; top: 0; }
table#trace td.idx { color: #666; white-space: nowrap; }
table#trace td.active { background: #f7fbff; }
tr.preempted td.idx { border-left: 4px solid #e08000; }
tr.preempted td.active { border-top: 3px solid #e08000; }
tr.failure td { background: #ffe3e3; }
tr.failure td.active { background: #ffc9c9; border: 2px solid #b00020; }
.mark { font-size: 0.75em; font-weight: bold; padding: 0 0.3em; border-radius: 3px; }
.mark-preempted { color: #fff; background: #e08000; }
.mark-failure { color: #fff; background: #b00020; }
.pp { display: inline-block; font-size: 0.8em; font-weight: bold; padding: 0.05em 0.4em; border-radius: 3px; margin-bottom: 0.2em; color: #fff; background: #666; }
.pp-yield { background: #2e7d32; }
.pp-deschedule { background: #6a1b9a; }
.pp-thread_create { background: #1565c0; }
.pp-thread_exit { background: #455a64; }
.pp-make_runnable { background: #00838f; }
.pp-sleep { background: #795548; }
.pp-sync_function { background: #ef6c00; }
.pp-data_race { background: #c62828; }
.pp-annotation { background: #ad1457; }
.pp-end { background: #212121; }
ul.events { margin: 0.2em 0 0 0; padding-left: 1.2em; font-size: 0.85em; color: #333; }
.race-side { display: block; color: #666; font-size: 0.9em; }
.race { margin-top: 0.2em; font-size: 0.85em; border-left: 3px solid #c62828; padding-left: 0.4em; }
.order { margin-top: 0.2em; font-size: 0.85em; border-left: 3px solid #1565c0; padding-left: 0.4em; }
.legend dt { display: inline-block; min-width: 9em; }
.legend dd { display: inline; margin: 0; }
.legend div { margin: 0.15em 0; }
pre.replay { background: #f4f4f4; padding: 0.5em; white-space: pre-wrap; }
pre.src { margin: 0.1em 0 0.4em 2em; padding: 0.2em 0.5em; background: #f8f8f8; border-left: 2px solid #ddd; font-size: 0.8em; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.src .hit { background: #fff3c4; font-weight: bold; }
</style>
</head>
<body>
<section id="summary">
{{- with .T.Bug}}
<h1 class="bug">A bug was found!</h1>
<p>Kind: <code class="bug-kind">{{.Kind}}</code></p>
<p class="bug-message">{{.Message}}</p>
{{- if .Stack}}
<h2>Current stack (thread {{.Thread}}):</h2>
<div class="stack">{{range $.BugStack}}{{template "srcframe" .}}{{end}}</div>
{{- end}}
{{- range .Details}}
<div class="detail">
<h3>{{.Title}}{{if .Thread}} (thread {{.Thread}}){{end}}</h3>
{{- with .Text}}<p>{{.}}</p>{{end}}
{{- if .Stack}}<div class="stack">{{range .Stack}}{{template "frame" .}}{{end}}</div>{{end}}
</div>
{{- end}}
{{- else}}
<h1>No bug in this interleaving.</h1>
{{- end}}
<dl class="counts">
{{- with .T.Program}}<dt>Program</dt><dd><code>{{.}}</code></dd>{{end}}
<dt>Distinct interleavings tested</dt><dd class="interleavings">{{.T.Interleavings}}</dd>
<dt>Estimated state space size</dt><dd class="estimated-size">{{.Size}}</dd>
<dt>Estimated state space coverage</dt><dd class="coverage">{{.Coverage}}</dd>
<dt>Preemptions in this trace</dt><dd class="preemptions">{{.T.Preemptions}}</dd>
{{- with .T.Minimized}}
<dt>Minimized</dt><dd class="minimized">{{.Summary $.T.Preemptions}}{{with .Original}}; original trace <code>{{.}}</code>{{end}}</dd>
<dt>Nearest passing interleaving</dt><dd class="needs">{{if .Needs}}{{.Needs}}<br>its schedule: <code>{{.Passing}}</code>{{else}}{{.NoneText}}{{end}}</dd>
{{- end}}
<dt>PP set</dt><dd class="pp-set">{{if .T.PPSet}}{{range $i, $p := .T.PPSet}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}{{else}}(mandatory PPs only){{end}}</dd>
</dl>
{{- if ge .Failure 0}}
<p><a href="#step-{{.Failure}}">Go to the failing transition (#{{.Failure}})</a></p>
{{- end}}
</section>

<section id="trace-section">
<h2>Preemption trace</h2>
<p>One row per transition: the thread in whose column a cell appears ran from where it last stopped until the preemption point shown, whose stack is in the cell (outer frames give the line of the call).</p>
<table id="trace">
<thead><tr><th>#</th>{{range .Cols}}<th>Thread {{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range $r := .Rows}}
<tr id="step-{{$r.Step.Index}}"{{with $r.Class}} class="{{.}}"{{end}} data-thread="{{$r.Step.Thread}}">
<td class="idx">{{$r.Step.Index}}{{if $r.Step.Preempted}} <span class="mark mark-preempted" title="a preemption started this transition">preempted</span>{{end}}</td>
{{- range $r.Cells}}{{if .}}
<td class="active">
<span class="pp pp-{{$r.Kind}}" title="{{$r.Step.PPKind}}">{{$r.Step.PP}}</span>{{if $r.Step.Failure}} <span class="mark mark-failure">failure</span>{{end}}
{{- if $r.Step.Stack}}
<div class="stack">{{range $r.Step.Stack}}{{template "frame" .}}{{end}}</div>
{{- end}}
{{- if $r.Step.Events}}
<ul class="events">{{range $r.Step.Events}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- with $r.Step.Order}}
<div class="order">{{.}}</div>
{{- end}}
{{- with $r.Step.Race}}
<div class="race">data race: {{race .}}
<div class="stack"><span class="race-side">this access:</span>{{template "frame" .Access}}<span class="race-side">{{.OtherName}}'s access:</span>{{template "frame" .Other}}</div>
</div>
{{- end}}
</td>
{{- else}}
<td></td>
{{- end}}{{end}}
</tr>
{{- end}}
</tbody>
</table>
</section>

{{- if .Races}}
<section id="races">
<h2>Data-race candidates ({{len .Races}})</h2>
<p>Pairs of accesses to the same memory, at least one a write and not both atomic, that no lock (Limited HB) or happens-before edge (Pure HB) ordered in some explored interleaving.</p>
{{- range .Races}}
<div class="detail race-candidate">
<h3>{{.Race.Line}}</h3>
<span class="race-side">A: thread {{.Race.A.Thread}}</span>
<div class="stack">{{range .A}}{{template "srcframe" .}}{{end}}</div>
<span class="race-side">B: thread {{.Race.B.Thread}}</span>
<div class="stack">{{range .B}}{{template "srcframe" .}}{{end}}</div>
</div>
{{- end}}
</section>
{{- end}}

<section id="legend" class="legend">
<h2>Legend</h2>
<dl>
{{- range .Legend}}
<div><dt><span class="pp pp-{{.Kind}}">{{.Label}}</span></dt> <dd>{{.Text}}</dd></div>
{{- end}}
<div><dt><span class="mark mark-preempted">preempted</span></dt> <dd>a preemption started this transition: the checker switched away from a thread that could have continued (orange bar)</dd></div>
<div><dt><span class="mark mark-failure">failure</span></dt> <dd>the bug happened in this transition (red row)</dd></div>
</dl>
</section>
{{- with .T.Replay}}

<section id="replay">
<h2>Replay</h2>
<pre class="replay"><code>{{.}}</code></pre>
</section>
{{- end}}
</body>
</html>
{{define "srcframe"}}{{template "frame" .Frame}}{{with .Src}}<pre class="src">{{range .}}<span class="{{if .Hit}}hit{{end}}">{{printf "%5d" .N}}  {{.Text}}</span>
{{end}}</pre>{{end}}{{end}}
{{define "frame"}}<span class="frame" title="pc {{hex .PC}}">{{if .Func}}<span class="pc">{{hex .PC}}</span> in <b>{{.Func}}</b>{{with .File}} <span class="loc">({{.}}:{{$.Line}})</span>{{end}}{{else if .Text}}{{.Text}}{{else}}{{hex .PC}}{{end}}</span>{{end}}
`
