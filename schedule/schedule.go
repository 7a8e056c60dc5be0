// Package schedule holds the strategies that pick a choice at each
// preemption point of one execution (shuttle-style: one small type per
// strategy) and the text form of a schedule. It sees machines only through
// record.Machine.
//
// Text form: choices separated by commas, each a thread id, optionally with
// an injected value after a colon: "1,1,2,1:7,3". Choice i is the thread
// that runs transition i (the first transition is always thread 1).
package schedule

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"landslide/record"
)

// Chooser picks the next choice; step counts transitions from 0.
type Chooser interface {
	Choose(m record.Machine, step int) (record.Choice, error)
}

// Default keeps running the current thread, switching only where an
// ordinary scheduler would (yield, block, exit).
type Default struct{}

// Choose implements Chooser.
func (Default) Choose(m record.Machine, _ int) (record.Choice, error) { return m.Default(), nil }

// Random picks uniformly among the runnable threads with a seeded PCG, so a
// seed names one schedule of a program. With Aborts, where the thread it picks
// is stopped at an _xbegin (record.XbeginWaiter), it then draws the
// transaction's fate as a fair coin: it starts, or _xbegin returns RETRY
// (a walk has no way to place a CONFLICT abort after the access that
// causes it). A program without transactions draws the same schedule
// either way.
type Random struct {
	r      *rand.Rand
	Aborts bool
}

// NewRandom returns the strategy for seed, with aborts.
func NewRandom(seed uint64) *Random {
	return &Random{r: rand.New(rand.NewPCG(seed, 0x6c616e64736c6964)), Aborts: true}
}

// Choose implements Chooser.
func (r *Random) Choose(m record.Machine, _ int) (record.Choice, error) {
	run := m.Runnable()
	if len(run) == 0 {
		return record.Choice{}, fmt.Errorf("no runnable thread")
	}
	c := record.Choice{Thread: run[r.r.IntN(len(run))]}
	if xw, ok := m.(record.XbeginWaiter); ok && r.Aborts && xw.AtXbegin(c.Thread) && r.r.IntN(2) == 1 {
		c.Value = record.XabortRetry
	}
	return c, nil
}

// Script replays a fixed list of choices, then continues as Default.
type Script struct{ Choices []record.Choice }

// Choose implements Chooser.
func (s Script) Choose(m record.Machine, step int) (record.Choice, error) {
	if step >= len(s.Choices) {
		return m.Default(), nil
	}
	c := s.Choices[step]
	for _, t := range m.Runnable() {
		if t == c.Thread {
			return c, nil
		}
	}
	return c, fmt.Errorf("schedule step %d: thread %d is not runnable (runnable: %v)", step, c.Thread, m.Runnable())
}

// Parse reads the text form.
func Parse(s string) ([]record.Choice, error) {
	var out []record.Choice
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		tid, val, hasVal := strings.Cut(f, ":")
		t, err := strconv.ParseInt(tid, 10, 32)
		if err != nil || t <= 0 {
			return nil, fmt.Errorf("schedule item %d %q: want a thread id (a positive integer), optionally :value", i+1, f)
		}
		c := record.Choice{Thread: record.TID(t)}
		if hasVal {
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("schedule item %d %q: bad value: %v", i+1, f, err)
			}
			c.Value = v
		}
		out = append(out, c)
	}
	return out, nil
}

// Format writes the text form.
func Format(cs []record.Choice) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.Itoa(int(c.Thread))
		if c.Value != 0 {
			parts[i] += ":" + strconv.FormatInt(c.Value, 10)
		}
	}
	return strings.Join(parts, ",")
}

// Play runs m to its end under ch and returns the choices made and the
// transitions. It stops early with the error of a Step or of ch.
func Play(m record.Machine, ch Chooser) ([]record.Choice, []*record.Transition, error) {
	var choices []record.Choice
	var trs []*record.Transition
	for step := 0; ; step++ {
		if ended, _ := m.Ended(); ended {
			return choices, trs, nil
		}
		c, err := ch.Choose(m, step)
		if err != nil {
			return choices, trs, err
		}
		choices = append(choices, c)
		tr, err := m.Step(c)
		if tr != nil {
			trs = append(trs, tr)
		}
		if err != nil {
			return choices, trs, err
		}
	}
}
