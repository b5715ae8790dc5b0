// Package m3gnet evaluates the M3GNet universal interatomic potential.
package m3gnet
