package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Progress is a snapshot of a running campaign for a progress display
// (crucible local, crucible submit --wait).
type Progress struct {
	Budget, Evaluated, Hits, Stable, Discoveries int
	// Elapsed is the time since the display started, and Since the
	// evaluations done before it (a resumed or followed campaign): the
	// rate counts only those after.
	Elapsed time.Duration
	Since   int
	// Waiting names the servers the display waits for ("Redis", "NATS"),
	// while they cannot be reached; the counters are the last ones read.
	Waiting string
}

// ProgressEvery is how often a progress printer that is not on a
// terminal prints a line while only the counters change.
const ProgressEvery = 10 * time.Second

// ProgressLine renders a progress snapshot as one line, with a bar when
// width > 0.
func ProgressLine(p Progress, width int) string {
	var b strings.Builder
	if width > 0 && p.Budget > 0 {
		filled := min(width, p.Evaluated*width/p.Budget)
		b.WriteString("[")
		b.WriteString(strings.Repeat("#", filled))
		b.WriteString(strings.Repeat(".", width-filled))
		b.WriteString("] ")
	}
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 && p.Evaluated > p.Since {
		rate = float64(p.Evaluated-p.Since) / s
	}
	fmt.Fprintf(&b, "%d/%d evaluated · %d hits · %d stable · %d discoveries · %.1f eval/s",
		p.Evaluated, p.Budget, p.Hits, p.Stable, p.Discoveries, rate)
	if p.Waiting != "" {
		fmt.Fprintf(&b, " · waiting for %s", p.Waiting)
	}
	return b.String()
}

// ProgressPrinter returns a progress callback that redraws one line on a
// terminal (tty). Otherwise it prints a line when another tenth of the
// budget is evaluated, when what it waits for changes (an outage begins
// or ends), and when the counters changed and the last line is
// ProgressEvery old.
func ProgressPrinter(w io.Writer, tty bool) func(Progress) {
	return progressPrinter(w, tty, time.Now)
}

func progressPrinter(w io.Writer, tty bool, now func() time.Time) func(Progress) {
	lastDecile := -1
	var last Progress
	var lastAt time.Time
	return func(p Progress) {
		if tty {
			fmt.Fprintf(w, "\r%s\033[K", ProgressLine(p, 30))
			return
		}
		decile := -1
		if p.Budget > 0 {
			decile = 10 * p.Evaluated / p.Budget
		}
		counters := func(p Progress) [5]int { return [5]int{p.Budget, p.Evaluated, p.Hits, p.Stable, p.Discoveries} }
		t := now()
		switch {
		case decile > lastDecile, p.Waiting != last.Waiting,
			counters(p) != counters(last) && t.Sub(lastAt) >= ProgressEvery:
		default:
			return
		}
		lastDecile, last, lastAt = max(lastDecile, decile), p, t
		fmt.Fprintln(w, ProgressLine(p, 0))
	}
}

// WatchProgress calls fn with the campaign's progress about every
// interval, until stop closes (then once more, with the final counters)
// or ctx ends. While Redis or NATS cannot be reached, the progress names
// them in Waiting and keeps the last counters read.
func (c *Client) WatchProgress(ctx context.Context, campaign string, every time.Duration, stop <-chan struct{}, fn func(Progress)) {
	start := time.Now()
	var last Progress
	since := -1
	read := func() Progress {
		var waiting []string
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := c.Store.State(sctx, campaign)
		cancel()
		switch {
		case ctx.Err() != nil: // the caller is done: no outage
		case err == nil:
			last = Progress{Budget: st.Budget, Evaluated: st.Counters.Evaluated, Hits: st.Counters.Hits,
				Stable: st.Counters.StableHits, Discoveries: st.Counters.Discoveries}
			if since < 0 {
				since = last.Evaluated
			}
		case errors.Is(err, store.ErrNotFound): // not created yet: nothing evaluated
			since = max(since, 0)
		default:
			waiting = append(waiting, "Redis")
		}
		if c.Bus != nil && c.Bus.NC != nil && !c.Bus.NC.IsConnected() {
			waiting = append(waiting, "NATS")
		}
		p := last
		p.Elapsed, p.Since, p.Waiting = time.Since(start), max(since, 0), strings.Join(waiting, " and ")
		return p
	}
	read() // the evaluations done before: the rate counts those after
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			fn(read())
			return
		case <-t.C:
			// A read can take seconds while Redis is down; a stop that
			// came meanwhile goes first (select picks at random among
			// ready cases, and the ticker is always ready by then).
			select {
			case <-stop:
				fn(read())
				return
			default:
			}
			fn(read())
		}
	}
}

// WaitDoneProgress is WaitDone with a progress display on w (redrawn in
// place when tty, see ProgressPrinter) while the campaign runs; w nil
// shows none.
func (c *Client) WaitDoneProgress(ctx context.Context, campaign string, w io.Writer, tty bool) (*messages.Status, error) {
	if w == nil {
		return c.WaitDone(ctx, campaign)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		c.WatchProgress(ctx, campaign, ProgressInterval(tty), stop, ProgressPrinter(w, tty))
	}()
	st, err := c.WaitDone(ctx, campaign)
	close(stop)
	<-done
	if tty {
		fmt.Fprintln(w)
	}
	return st, err
}

// ProgressInterval is how often a progress display reads the counters:
// twice a second on a terminal, every second otherwise.
func ProgressInterval(tty bool) time.Duration {
	if tty {
		return 500 * time.Millisecond
	}
	return time.Second
}
