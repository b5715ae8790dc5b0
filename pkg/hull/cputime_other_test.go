//go:build !unix

package hull

import "time"

func processCPUTime() (time.Duration, bool) { return 0, false }
