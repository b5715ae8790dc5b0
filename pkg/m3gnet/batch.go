package m3gnet

import (
	"runtime"
	"sync"
)

// EvaluateAll evaluates many systems on up to workers goroutines (0: one
// per CPU), each with its own Workspace. It returns one result and one
// error per system, in order.
func (m *Model) EvaluateAll(systems []*System, workers int) ([]Result, []error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(systems))
	res := make([]Result, len(systems))
	errs := make([]error, len(systems))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := NewWorkspace()
			for i := range next {
				errs[i] = m.Evaluate(ws, systems[i], &res[i])
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

// Calculator pairs a model with a workspace of its own, for one goroutine
// that evaluates system after system (a relaxation).
type Calculator struct {
	Model *Model
	ws    Workspace
}

// NewCalculator returns a calculator for m.
func NewCalculator(m *Model) *Calculator { return &Calculator{Model: m} }

// Evaluate computes the energy, forces and stress of sys into res.
func (c *Calculator) Evaluate(sys *System, res *Result) error {
	return c.Model.Evaluate(&c.ws, sys, res)
}
