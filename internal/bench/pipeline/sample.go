package pipeline

import (
	"runtime/metrics"
	"sort"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
)

// cpuSamples are the process's CPU seconds and heap allocations, and the
// machine's stolen time, at increasing times.
type cpuSamples struct {
	at    []time.Time
	cpu   []float64 // CPU seconds of the process
	alloc []float64 // bytes the process has allocated on the heap
	// Stolen time is read less often, since reading the kernel's
	// statistics costs much more than the process's CPU time: steal holds
	// the seconds a hypervisor took from the machine's cpus CPUs, summed,
	// at the times stealAt (nil = not reported).
	stealAt []time.Time
	steal   []float64
	cpus    int
}

// stealEvery is how many samples of CPU time there are to one of stolen
// time.
const stealEvery = 25

// sampleCPU samples the process's CPU time and heap allocations, and the
// machine's stolen time, every period until the returned function is
// called. Where CPU time is not available there are no samples.
func sampleCPU(period time.Duration) (stop func() cpuSamples) {
	var s cpuSamples
	if _, ok := cputime.Process(); !ok {
		return func() cpuSamples { return s }
	}
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	take := func(last bool) {
		c, _ := cputime.Process()
		metrics.Read(allocs)
		var a float64
		if allocs[0].Value.Kind() == metrics.KindUint64 {
			a = float64(allocs[0].Value.Uint64())
		}
		now := time.Now()
		if len(s.at)%stealEvery == 0 || last {
			if st, cpus, ok := cputime.Steal(); ok {
				s.stealAt, s.steal, s.cpus = append(s.stealAt, now), append(s.steal, st.Seconds()), cpus
			}
		}
		s.at, s.cpu, s.alloc = append(s.at, now), append(s.cpu, c.Seconds()), append(s.alloc, a)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			take(false)
			select {
			case <-done:
				take(true)
				return
			case <-t.C:
			}
		}
	}()
	return func() cpuSamples {
		close(done)
		<-stopped
		return s
	}
}

// valueAt interpolates the values v sampled at times at at time t,
// clamped to the samples.
func valueAt(at []time.Time, v []float64, t time.Time) float64 {
	n := len(at)
	i := sort.Search(n, func(i int) bool { return !at[i].Before(t) })
	switch {
	case n == 0:
		return 0
	case i == 0:
		return v[0]
	case i == n:
		return v[n-1]
	}
	f := t.Sub(at[i-1]).Seconds() / at[i].Sub(at[i-1]).Seconds()
	return v[i-1] + f*(v[i]-v[i-1])
}

// between is the CPU seconds used from a to b.
func (s cpuSamples) between(a, b time.Time) float64 {
	return valueAt(s.at, s.cpu, b) - valueAt(s.at, s.cpu, a)
}

// allocatedBetween is the bytes allocated from a to b.
func (s cpuSamples) allocatedBetween(a, b time.Time) float64 {
	return valueAt(s.at, s.alloc, b) - valueAt(s.at, s.alloc, a)
}

// stealShare is the share of the machine's CPU time a hypervisor took
// from a to b; nil where steal is not reported.
func (s cpuSamples) stealShare(a, b time.Time) *float64 {
	if s.steal == nil || !b.After(a) {
		return nil
	}
	return stealShare(valueAt(s.stealAt, s.steal, b)-valueAt(s.stealAt, s.steal, a), b.Sub(a), s.cpus)
}

// stealShare is stolen seconds (summed over cpus CPUs) over the CPU time
// of wall.
func stealShare(stolen float64, wall time.Duration, cpus int) *float64 {
	return new(min(1, max(0, stolen/(wall.Seconds()*float64(cpus)))))
}
