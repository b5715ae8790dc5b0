package datadir

import (
	"fmt"
	"io"
	"strings"
)

// Printer renders the events of a pull for a person: on a terminal a
// progress bar per file, redrawn in place; elsewhere (a log, a pipe) one
// plain line per file.
type Printer struct {
	w        io.Writer
	terminal bool
	percent  int // last percentage drawn, −1 before the first
}

// NewPrinter returns a Printer writing to w; terminal draws bars.
func NewPrinter(w io.Writer, terminal bool) *Printer {
	return &Printer{w: w, terminal: terminal, percent: -1}
}

// barWidth is the number of cells of a progress bar.
const barWidth = 30

// Event renders one event; use it as PullOptions.Progress.
func (p *Printer) Event(e Event) {
	switch e.Kind {
	case EventSkip:
		fmt.Fprintf(p.w, "present  %-48s %9s  checksum ok\n", e.File.Path, formatBytes(e.Bytes))
	case EventStart:
		p.percent = -1
		if !p.terminal {
			verb := "fetch   "
			if e.Replacing {
				verb = "refetch "
			}
			fmt.Fprintf(p.w, "%s %-48s %9s\n", verb, e.File.Path, formatBytes(e.File.Size))
			return
		}
		p.bar(e)
	case EventProgress:
		if p.terminal {
			p.bar(e)
		}
	case EventDone:
		p.clear()
		fmt.Fprintf(p.w, "fetched  %-48s %9s  checksum ok\n", e.File.Path, formatBytes(e.Bytes))
	case EventFail:
		p.clear()
		fmt.Fprintf(p.w, "FAILED   %s\n", e.Err)
	}
}

// bar redraws the progress bar when the percentage changed.
func (p *Printer) bar(e Event) {
	pct := 0
	if e.File.Size > 0 {
		pct = int(min(100, 100*e.Bytes/e.File.Size))
	}
	if pct == p.percent {
		return
	}
	p.percent = pct
	done := pct * barWidth / 100
	fmt.Fprintf(p.w, "\r\033[K%-48s [%s%s] %3d%% %9s / %s",
		e.File.Path, strings.Repeat("#", done), strings.Repeat(" ", barWidth-done), pct,
		formatBytes(e.Bytes), formatBytes(e.File.Size))
}

// clear erases a bar before a line is written over it.
func (p *Printer) clear() {
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// formatBytes writes a size in B, kB or MB (powers of 1000).
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
