package cli

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"landslide/check"
	"landslide/quicksand"
	"landslide/store"
)

// qsProgress is what quicksand shows of its running jobs: each job's ETA
// smoothed for the reports (the scheduler decides on the raw one, as the
// thesis's Algorithm 3 does), and the live bar's status on a terminal.
// Guarded by qsRun.mu.
type qsProgress struct {
	status   *statusOut
	smooth   map[int]*check.Smoother
	scale    map[int]float64    // wall time over estimator time, per job
	running  map[int]string     // the live bar's part for each running job
	jobs     map[int]check.Step // each running job's last interleaving
	steps    int                // interleavings, all jobs
	lastLive time.Time
}

func newQSProgress(status *statusOut) *qsProgress {
	return &qsProgress{status: status, smooth: map[int]*check.Smoother{}, scale: map[int]float64{}, running: map[int]string{},
		jobs: map[int]check.Step{}}
}

// observe takes job id's estimate after an interleaving (the scheduler has
// seen it) and, on a terminal, redraws the live bar now and then.
func (q *qsRun) observe(id int, st check.Step) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.prog
	sm := p.smooth[id]
	if sm == nil {
		sm = &check.Smoother{}
		p.smooth[id] = sm
	}
	e := st.Estimate
	if q.det {
		// The clock counts interleavings: so do the estimate and its ETA.
		e.Total, e.Elapsed = time.Duration(e.Size), time.Duration(st.Interleavings)
		if e.ModelProportion > 0 {
			e.ModelTotal = time.Duration(float64(e.Branches) / e.ModelProportion)
		}
	}
	sm.Observe(e)
	if !q.det {
		p.scale[id] = wallScale(st.Wall, sm.Elapsed())
	}
	p.steps++
	p.jobs[id] = st
	if q.st != nil {
		q.st.UpdateLive(false, q.publishLocked)
	}
	if !p.status.live() {
		return
	}
	p.running[id] = fmt.Sprintf("job %d %.1f%% %s", id, 100*e.Proportion, q.forecastLocked(id, true))
	if now := time.Now(); now.Sub(p.lastLive) >= liveEvery {
		p.lastLive = now
		q.updateLive()
	}
}

// jobDone takes a job off the live bar.
func (q *qsRun) jobDone(id int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.prog.running, id)
	delete(q.prog.jobs, id)
}

// publishLocked puts the run's progress in the store's live status (with
// mu held): the budget spent, and each running job's.
func (q *qsRun) publishLocked(l *store.Live) {
	r := lastLiveRun(l)
	if r == nil {
		return
	}
	p := q.prog
	r.Interleavings = p.steps
	r.ElapsedSec = time.Since(q.wall0).Seconds()
	ids := slices.Sorted(maps.Keys(p.jobs))
	r.Jobs = r.Jobs[:0]
	for _, id := range ids {
		st := p.jobs[id]
		r.Jobs = append(r.Jobs, store.LiveJob{ID: id, Interleavings: st.Interleavings, Proportion: st.Estimate.Proportion,
			Progress: fmt.Sprintf("%d interleavings, %s, %s", st.Interleavings, coverage(st.Estimate.Proportion, st.Estimate.Size), q.forecastLocked(id, false))})
	}
	r.Progress = fmt.Sprintf("budget %s; %d interleavings in all, %d %s running", q.usedLocked(), p.steps, len(ids), plural(len(ids), "job"))
}

// usedLocked is the budget spent so far (with mu held).
func (q *qsRun) usedLocked() string {
	if q.det {
		return fmt.Sprintf("%d of %d interleavings", q.prog.steps, int64(q.budget))
	}
	return fmt.Sprintf("%s of %s", time.Since(q.wall0).Round(time.Second), q.budget)
}

// updateLive redraws the bar (with mu held): the budget spent, and each
// running job's progress and ETA.
func (q *qsRun) updateLive() {
	p := q.prog
	spent := float64(time.Since(q.wall0)) / float64(q.budget)
	if q.det {
		spent = float64(p.steps) / float64(q.budget)
	}
	used := q.usedLocked()
	ids := make([]int, 0, len(p.running))
	for id := range p.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	parts := []string{"budget " + used}
	for _, id := range ids {
		parts = append(parts, p.running[id])
	}
	p.status.Update(spent, strings.Join(parts, statusSep))
}

// forecast is job j's smoothed ETA and range, for the progress report.
func (q *qsRun) forecast(j *quicksand.Job) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.forecastLocked(j.ID, false)
}

// forecastLocked is job id's forecast, for the live bar (compact) or a
// report.
func (q *qsRun) forecastLocked(id int, live bool) string {
	sm := q.prog.smooth[id]
	if sm == nil {
		return "ETA not known yet"
	}
	scale := q.prog.scale[id]
	if scale == 0 {
		scale = 1
	}
	if live {
		return liveForecastText(sm.Forecast(), scale, q.det)
	}
	return forecastText(sm.Forecast(), scale, q.det)
}

// rawETA prints the ETA the scheduler decided on (clock units, +Inf while
// unknown).
func (q *qsRun) rawETA(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "unknown"
	}
	return q.clock(time.Duration(v))
}
