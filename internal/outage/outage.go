// Package outage words what the services and the CLI say when NATS or
// Redis cannot be reached: one clear line with where and why, then quiet
// retries.
package outage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// RetryEvery is the longest wait between two attempts to reach Redis.
const RetryEvery = 2 * time.Second

// Unreachable is the one line said when a server (Redis, NATS) cannot be
// reached: where, the cause in a few words, and how often it is retried.
func Unreachable(what, addr string, err error, every time.Duration) string {
	return fmt.Sprintf("cannot reach %s at %s: %s; retrying every %v", what, addr, Cause(err), every)
}

// Cause is a network error in a few words ("connection refused", "no
// such host", "timeout"), or the error itself.
func Cause(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return dns.Err + " (" + dns.Name + ")"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return "timeout"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "dial ") {
		return s[i+2:]
	}
	return s
}

// Probe dials addr (host:port) over TCP and returns why it cannot be
// reached, or nil: a client library's own error after its retries is
// often only a timeout.
func Probe(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}
