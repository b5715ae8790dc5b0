package console

import (
	"context"
	"errors"
)

// Controller carries out the lifecycle verbs the console's buttons and
// POST endpoints ask for. Each is idempotent: cancelling a cancelled
// campaign, say, is no error.
type Controller interface {
	Cancel(ctx context.Context, campaign string) error
	Pause(ctx context.Context, campaign string) error
	Resume(ctx context.Context, campaign string) error
	// Extend raises the campaign's budget to budget evaluations.
	Extend(ctx context.Context, campaign string, budget int) error
	Delete(ctx context.Context, campaign string) error
}

// ErrUnsupported is returned by a controller that cannot carry out a
// verb; the API answers it with 501 Not Implemented.
var ErrUnsupported = errors.New("not supported by this server")

// ReadOnly is the controller of an installation whose client offers no
// lifecycle verbs: every verb fails with ErrUnsupported.
type ReadOnly struct{}

func (ReadOnly) Cancel(context.Context, string) error      { return ErrUnsupported }
func (ReadOnly) Pause(context.Context, string) error       { return ErrUnsupported }
func (ReadOnly) Resume(context.Context, string) error      { return ErrUnsupported }
func (ReadOnly) Extend(context.Context, string, int) error { return ErrUnsupported }
func (ReadOnly) Delete(context.Context, string) error      { return ErrUnsupported }
