package local

import (
	"os"
	"runtime/debug"
)

// GCPercent is the collector's GOGC in a process that runs a whole local
// installation (`crucible local`, `crucible bench pipeline`). Its live heap
// is mostly what lives all run long (models, reference tables, hull caches,
// the brokers' state), while the embedded Redis-protocol server allocates
// a fresh Lua interpreter per script call, so the default of 100 collects
// often for little: 400 trades a larger peak heap for less CPU.
const GCPercent = 400

// TuneGC applies GCPercent unless the user set GOGC.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}
