package cputime

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// FlopsPerCycleAVX2 is the double-precision peak of a core with two 256-bit
// FMA units: 2 units × 4 doubles × 2 operations.
const FlopsPerCycleAVX2 = 16

// CPU describes the processor from /proc/cpuinfo, where there is one.
type CPU struct {
	Model string
	MHz   float64
	Cores int
	AVX2  bool    // AVX2 and FMA
	Peak  float64 // GFLOP/s per core, AVX2 FMA double, nominal clock
}

// ReadCPU reads /proc/cpuinfo; without it only Cores is set.
func ReadCPU() CPU {
	c := CPU{Cores: runtime.NumCPU()}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case key == "model name" && c.Model == "":
			c.Model = value
		case key == "cpu MHz" && c.MHz == 0:
			c.MHz, _ = strconv.ParseFloat(value, 64)
		case key == "flags" && !c.AVX2:
			fields := " " + value + " "
			c.AVX2 = strings.Contains(fields, " avx2 ") && strings.Contains(fields, " fma ")
		}
	}
	if c.AVX2 && c.MHz > 0 {
		c.Peak = c.MHz * 1e6 * FlopsPerCycleAVX2 / 1e9
	}
	return c
}
