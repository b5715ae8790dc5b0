package messages

import (
	"errors"
	"testing"
	"time"
)

// decoders are every message type a service decodes, each with a valid
// example to seed the corpus.
func decoders() map[string]func() Message {
	return map[string]func() Message{
		"campaign_spec":      func() Message { return &CampaignSpec{} },
		"generation_request": func() Message { return &GenerationRequest{} },
		"proposal_record":    func() Message { return &ProposalRecord{} },
		"candidate":          func() Message { return &Candidate{} },
		"evaluation":         func() Message { return &Evaluation{} },
		"relax_job":          func() Message { return &RelaxJob{} },
		"verdict":            func() Message { return &Verdict{} },
		"status":             func() Message { return &Status{} },
		"reflection":         func() Message { return &Reflection{} },
		"dead_letter":        func() Message { return &DeadLetter{} },
		"prompt":             func() Message { return &Prompt{} },
	}
}

func seedMessages() []Message {
	c := &Candidate{Schema: SchemaVersion, ID: CandidateID("c1", 0, 0), Campaign: "c1", Formula: "NaCl", Operator: "x", Generator: "evolve",
		Structure: Structure{Formula: "NaCl", Species: []string{"Na", "Cl"}, Coords: [][3]float64{{0, 0, 0}, {0.5, 0.5, 0.5}},
			Lattice: [3][3]float64{{5.6, 0, 0}, {0, 5.6, 0}, {0, 0, 5.6}}}, ProposedAt: time.Unix(0, 0).UTC()}
	ev := &Evaluation{Schema: SchemaVersion, ID: c.ID, Campaign: "c1", Candidate: *c, Valid: true, EvaluatedAt: time.Unix(0, 0).UTC()}
	return []Message{
		c, ev,
		&GenerationRequest{Schema: SchemaVersion, Campaign: "c1", Generation: 1, Slots: 4, Trigger: "start/0"},
		&ProposalRecord{Schema: SchemaVersion, Campaign: "c1", Generation: 0, Slots: 4, Trigger: "start/0", Candidates: []*Candidate{c}, Counts: true, Rejected: 2},
		&DeadLetter{Schema: SchemaVersion, Stream: StreamCandidates, Reason: "x", Data: []byte("{"), Size: 1},
	}
}

// FuzzDecode: no input makes a decoder panic; what decodes is valid, and
// encodes and decodes again to a valid message of the same type.
func FuzzDecode(f *testing.F) {
	for _, m := range seedMessages() {
		if b, err := Encode(m); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":2,"campaign":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, mk := range decoders() {
			m := mk()
			err := Decode(data, m)
			if err != nil {
				if !errors.Is(err, ErrInvalid) && m.Validate() == nil {
					t.Fatalf("%s: %v is neither ErrInvalid nor a validation error", name, err)
				}
				continue
			}
			b, err := Encode(m)
			if err != nil {
				t.Fatalf("%s: decoded but does not encode: %v", name, err)
			}
			if err := Decode(b, mk()); err != nil {
				t.Fatalf("%s: re-decode: %v", name, err)
			}
		}
	})
}
