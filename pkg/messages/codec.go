package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Message is implemented by every message type.
type Message interface {
	MsgID() string
	Validate() error
}

// Headered is a message that also states some of its content as header
// fields, so that a consumer can act on them without decoding the body.
// The body stays the authority: a consumer that decodes it ignores them.
type Headered interface {
	Headers() map[string]string
}

// HeaderJudge on an evaluation says whether the judge must weigh it:
// "yes" for a feasible, stable proposed candidate, else "no".
const HeaderJudge = "Crucible-Judge"

// HeaderRetryOf marks a message re-published from a dead letter
// ("crucible deadletter retry"): the dead letter's sequence in the
// DEADLETTER stream.
const HeaderRetryOf = "Crucible-Retry-Of"

// Encode validates m and returns its JSON.
func Encode(m Message) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// Decode parses data into m strictly (unknown fields are an error, so a
// message of another shape is not half-read) and validates it.
func Decode(data []byte, m Message) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return fmt.Errorf("%w: decode %T: %v", ErrInvalid, m, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: decode %T: trailing data", ErrInvalid, m)
	}
	return m.Validate()
}
