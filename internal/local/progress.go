package local

import (
	"fmt"
	"io"
)

// ProgressPrinter returns a progress callback that redraws one line on a
// terminal (tty) and prints a line every tenth of the budget otherwise.
func ProgressPrinter(w io.Writer, tty bool) func(Progress) {
	lastDecile := -1
	return func(p Progress) {
		if tty {
			fmt.Fprintf(w, "\r%s\033[K", ProgressLine(p, 30))
			return
		}
		if p.Budget == 0 {
			return
		}
		if d := 10 * p.Evaluated / p.Budget; d > lastDecile {
			lastDecile = d
			fmt.Fprintln(w, ProgressLine(p, 0))
		}
	}
}
