//go:build !unix

package cli

import "time"

// predictCPUTime is not measured on this system.
func predictCPUTime() time.Duration { return 0 }
