// Package modelclient calls plug-in model servers over NATS request/reply, the
// contract of pkg/modelserver, as the oracle's External property models.
package modelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/modelserver"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

// Client is one registry entry's server, reached over a NATS connection.
type Client struct {
	// Conn returns the connection, or why there is none; it is called on
	// each request, so the oracle can be built before the connection.
	Conn  func() (*nats.Conn, error)
	Entry modelserver.Model
}

var _ oracle.External = (*Client)(nil)

// Clients are the registry's plug-ins over the connection conn returns.
func Clients(conn func() (*nats.Conn, error), r *modelserver.Registry) []oracle.External {
	if r == nil {
		return nil
	}
	out := make([]oracle.External, len(r.Models))
	for i, m := range r.Models {
		out[i] = &Client{Conn: conn, Entry: m}
	}
	return out
}

// Model implements oracle.External.
func (c *Client) Model() modelserver.Model { return c.Entry }

// Predict implements oracle.External: the structures in batches of
// Entry.Batch, each a request with Entry.Timeout. A failed request fails
// its batch's structures with the reason (timeout, no_responders,
// bad_reply or the server's).
func (c *Client) Predict(ctx context.Context, structs []*crystal.Structure) []modelserver.Value {
	out := make([]modelserver.Value, 0, len(structs))
	for start := 0; start < len(structs); start += c.Entry.Batch {
		batch := structs[start:min(len(structs), start+c.Entry.Batch)]
		out = append(out, c.batch(ctx, batch)...)
	}
	return out
}

func (c *Client) batch(ctx context.Context, structs []*crystal.Structure) []modelserver.Value {
	fail := func(reason, detail string) []modelserver.Value {
		out := make([]modelserver.Value, len(structs))
		for i := range out {
			out[i] = modelserver.Value{Err: &modelserver.Error{Reason: reason, Detail: detail}}
		}
		return out
	}
	req := modelserver.Request{Version: modelserver.Version, Property: c.Entry.Property, Structures: make([]modelserver.Structure, len(structs))}
	for i, s := range structs {
		data, err := crystal.MarshalPymatgenJSON(s)
		if err != nil {
			return fail("bad_structure", err.Error())
		}
		req.Structures[i] = modelserver.Structure{ID: strconv.Itoa(i), Structure: json.RawMessage(data)}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fail("bad_request", err.Error())
	}
	nc, err := c.Conn()
	if err != nil || nc == nil {
		return fail(modelserver.ReasonNoResponders, fmt.Sprintf("no NATS connection to reach %s: %v", c.Entry.Endpoint, err))
	}
	rctx, cancel := context.WithTimeout(ctx, c.Entry.Timeout)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, c.Entry.Endpoint, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fail(modelserver.ReasonNoResponders, fmt.Sprintf("no server answers on %s (is the plug-in running?)", c.Entry.Endpoint))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
		return fail(modelserver.ReasonTimeout, fmt.Sprintf("no reply on %s within %s", c.Entry.Endpoint, c.Entry.Timeout))
	case err != nil:
		return fail(modelserver.ReasonNoResponders, err.Error())
	}
	var rep modelserver.Reply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		return fail(modelserver.ReasonBadReply, err.Error())
	}
	return c.Entry.Check(&rep, len(structs))
}

// Static returns a Conn function for a connection made beforehand.
func Static(nc *nats.Conn) func() (*nats.Conn, error) {
	return func() (*nats.Conn, error) { return nc, nil }
}
