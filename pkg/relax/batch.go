package relax

import (
	"context"
	"runtime"
	"sync"

	"github.com/crucible-sci/crucible/pkg/m3gnet"
)

// RelaxAll relaxes many systems on up to workers goroutines (0: one per
// CPU), each with its own potential from newPot (a potential with a
// workspace is not safe for concurrent use). It returns one result and one
// error per system, in order; a cancelled context stops the relaxations in
// progress and skips the rest.
func RelaxAll(ctx context.Context, newPot func() Potential, systems []*m3gnet.System, opt Options, workers int) ([]*Result, []error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(systems))
	res := make([]*Result, len(systems))
	errs := make([]error, len(systems))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pot := newPot()
			for i := range next {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				res[i], errs[i] = Relax(ctx, pot, systems[i], opt)
			}
		}()
	}
	for i := range systems {
		next <- i
	}
	close(next)
	wg.Wait()
	return res, errs
}
