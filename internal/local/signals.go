package local

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupts turns SIGINT and SIGTERM into a run's interrupt and abort
// (CampaignOptions): the first signal closes interrupt (the campaign
// drains), the second closes abort (the drain stops at once, and what is
// there is written); from then on the signals have their default effect,
// so that a third ends the process. stop restores that default sooner.
func Interrupts() (interrupt, abort <-chan struct{}, stop func()) {
	in, ab := make(chan struct{}), make(chan struct{})
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for _, c := range []chan struct{}{in, ab} {
			select {
			case <-sigs:
				close(c)
			case <-done:
				return
			}
		}
		signal.Stop(sigs)
	}()
	var once sync.Once
	return in, ab, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
}
