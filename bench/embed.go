// Package bench holds the reference implementations that "crucible bench"
// runs beside Crucible's own, embedded so that the binary carries them.
package bench

import _ "embed"

// M3GNetTorch is m3gnet_torch.py: M3GNet's equations in plain PyTorch,
// run by "crucible bench m3gnet" with the interpreter reading it from
// standard input.
//
//go:embed m3gnet_torch.py
var M3GNetTorch string
