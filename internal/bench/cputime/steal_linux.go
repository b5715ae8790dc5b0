package cputime

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 on every
// architecture Go runs Linux on.
const userHZ = 100

// Steal is the time the hypervisor has taken from this virtual machine's
// CPUs so far, summed over its cpus CPUs (/proc/stat's steal column):
// time its virtual CPUs were ready to run while the host ran something
// else. A benchmark's wall-clock rates drop with it whatever the program
// does. ok is false where the kernel does not report it.
func Steal() (d time.Duration, cpus int, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	return stealOf(f)
}

// stealOf reads the steal column of /proc/stat's first line (the total)
// from r, and counts the lines of single CPUs after it.
func stealOf(r io.Reader) (d time.Duration, cpus int, ok bool) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return 0, 0, false
	}
	// cpu  user nice system idle iowait irq softirq steal …
	fields := bytes.Fields(sc.Bytes())
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, 0, false
	}
	ticks, err := strconv.ParseUint(string(fields[8]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	for sc.Scan() && bytes.HasPrefix(sc.Bytes(), []byte("cpu")) {
		cpus++
	}
	if cpus == 0 {
		return 0, 0, false
	}
	return time.Duration(ticks) * time.Second / userHZ, cpus, true
}
