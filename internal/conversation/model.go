package conversation

import (
	"fmt"
	"sync"
)

// ModelPin is a run's agent model. Every session of the run must talk to
// the same model, or a decay could be a model change; but asking the CLI
// for the model an alias (or its default) stands for costs a process start
// before turn 1, on the path every conversation waits on. So the first
// sessions start with the model as asked, the first one to report the model
// its CLI resolved pins it (its init event), and every session after that
// passes the pinned name. A session that reports another model than the
// pinned one is an error, never a turn of another model.
type ModelPin struct {
	mu     sync.Mutex
	asked  string // --model as given: a name, an alias, or "" (the CLI's default)
	pinned string
	onPin  func(model string)
}

// NewModelPin returns the pin of a run whose model was asked as asked and
// is pinned already when pinned is set (a resumed run). onPin, when set,
// hears the pinned name once, when it is pinned here.
func NewModelPin(asked, pinned string, onPin func(model string)) *ModelPin {
	return &ModelPin{asked: asked, pinned: pinned, onPin: onPin}
}

// Arg is the --model value of a session starting now ("": none).
func (p *ModelPin) Arg() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pinned != "" {
		return p.pinned
	}
	return p.asked
}

// Check takes the model a session's CLI reported ("": the turn reported
// none, as a live session's later turns do): the first one pins the run's
// model; one that differs from the pinned model is an error.
func (p *ModelPin) Check(got string) error {
	if got == "" {
		return nil
	}
	p.mu.Lock()
	pinned := p.pinned
	if pinned == "" {
		p.pinned = got
	}
	p.mu.Unlock()
	switch {
	case pinned == "":
		if p.onPin != nil {
			p.onPin(got)
		}
	case got != pinned:
		asked := p.asked
		if asked == "" {
			asked = "its default"
		}
		return fmt.Errorf("the CLI answered with %s, asked for %s, but the run's model is %s (pinned by its first session): a session of another model is not a turn of this run", got, asked, pinned)
	}
	return nil
}

// check is Check on a driver's pin, if it has one.
func (p *ModelPin) check(got string) error {
	if p == nil {
		return nil
	}
	return p.Check(got)
}
