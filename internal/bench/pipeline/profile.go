package pipeline

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// profiled runs f with a CPU profile into cpuPath and allocation profiles
// into memPath (before: memPath.base), where those are not empty.
func profiled(cpuPath, memPath string, f func() error) error {
	if err := writeAllocProfile(memPath, ".base"); err != nil {
		return err
	}
	stop, err := startCPUProfile(cpuPath)
	if err != nil {
		return err
	}
	err = f()
	stop()
	if err != nil {
		return err
	}
	return writeAllocProfile(memPath, "")
}

// startCPUProfile profiles the process into path until stop is called;
// with an empty path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeAllocProfile writes the allocations so far to path+suffix; with an
// empty path it does nothing.
func writeAllocProfile(path, suffix string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		return err
	}
	// The profile holds what was allocated up to the last collection;
	// without one now it would miss up to a collection cycle's worth
	// (seconds of a campaign at the local mode's GOGC).
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
