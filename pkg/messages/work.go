package messages

import (
	"fmt"
	"math"
	"time"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// GenerationRequest asks a proposer for one generation of a campaign: pick
// an island, show its best and worst, propose up to Slots candidates.
type GenerationRequest struct {
	Schema     int    `json:"schema"`
	Campaign   string `json:"campaign"`
	Episode    int    `json:"episode"`
	Generation int    `json:"generation"`
	// Slots is how many candidates this generation may publish: at most
	// the campaign's batch size, less near the end of the budget.
	Slots int `json:"slots"`
	// Trigger says what asked for the generation (the campaign start, the
	// completion of an earlier generation, an empty generation).
	Trigger     string    `json:"trigger"`
	RequestedAt time.Time `json:"requested_at"`
}

// GenerationID is the id of generation g of a campaign.
func GenerationID(campaign string, g int) string {
	return fmt.Sprintf("%s-g%d", campaign, g)
}

// MsgID is the request's deterministic message id.
func (r *GenerationRequest) MsgID() string {
	return "propose/" + GenerationID(r.Campaign, r.Generation)
}

// Validate names the bad field.
func (r *GenerationRequest) Validate() error {
	if err := checkSchema("generation_request", r.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(r.Campaign); err != nil {
		return invalid("generation_request.campaign", "%v", err)
	}
	if r.Generation < 0 {
		return invalid("generation_request.generation", "%d is negative", r.Generation)
	}
	if r.Episode < 0 {
		return invalid("generation_request.episode", "%d is negative", r.Episode)
	}
	if r.Slots < 1 || r.Slots > MaxBatchSize {
		return invalid("generation_request.slots", "%d outside [1, %d]", r.Slots, MaxBatchSize)
	}
	return nil
}

// ProposalRecord is the journal entry of one recorded generation: what
// the proposer recorded in Redis for it (its reservation, the candidates
// it accepted, in order, and its counts), published before its candidates.
// Redis holds the working copy; this record, on the CAMPAIGNS stream, is
// what a Redis restored from an earlier state is reconciled from (the
// reflector's reconciliation re-records a generation Redis lost, so its
// candidates stay recorded ones rather than forgeries).
type ProposalRecord struct {
	Schema     int    `json:"schema"`
	Campaign   string `json:"campaign"`
	Episode    int    `json:"episode"`
	Generation int    `json:"generation"`
	Island     int    `json:"island"`
	// Slots and Trigger are those of the generation's request.
	Slots   int    `json:"slots"`
	Trigger string `json:"trigger"`
	// Candidates are the accepted candidates as published (none: an empty
	// generation).
	Candidates []*Candidate `json:"candidates"`
	// Counts is false for a record re-published after a crash, which
	// knows the accepted candidates but not the rejected counts and LLM
	// usage the first recording added.
	Counts           bool `json:"counts,omitempty"`
	Rejected         int  `json:"rejected,omitempty"`
	RejectedKnown    int  `json:"rejected_known,omitempty"`
	PromptTokens     int  `json:"prompt_tokens,omitempty"`
	CompletionTokens int  `json:"completion_tokens,omitempty"`
	LLMCalls         int  `json:"llm_calls,omitempty"`
}

// MsgID is the record's deterministic message id: one per generation.
func (r *ProposalRecord) MsgID() string {
	return "proposal/" + GenerationID(r.Campaign, r.Generation)
}

// Validate names the bad field.
func (r *ProposalRecord) Validate() error {
	if err := checkSchema("proposal_record", r.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(r.Campaign); err != nil {
		return invalid("proposal_record.campaign", "%v", err)
	}
	if r.Generation < 0 || r.Episode < 0 || r.Island < 0 {
		return invalid("proposal_record.generation", "generation %d, episode %d, island %d: none may be negative", r.Generation, r.Episode, r.Island)
	}
	if r.Slots < 1 || r.Slots > MaxBatchSize {
		return invalid("proposal_record.slots", "%d outside [1, %d]", r.Slots, MaxBatchSize)
	}
	if len(r.Candidates) > r.Slots {
		return invalid("proposal_record.candidates", "%d candidates for %d slots", len(r.Candidates), r.Slots)
	}
	for i, c := range r.Candidates {
		if c == nil {
			return invalid(fmt.Sprintf("proposal_record.candidates[%d]", i), "null")
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("proposal_record.candidates[%d]: %w", i, err)
		}
		if c.Campaign != r.Campaign || c.Generation != r.Generation || c.Seed {
			return invalid(fmt.Sprintf("proposal_record.candidates[%d]", i), "candidate %s is not of generation %d of %s", c.ID, r.Generation, r.Campaign)
		}
	}
	if r.Rejected < 0 || r.RejectedKnown < 0 || r.PromptTokens < 0 || r.CompletionTokens < 0 || r.LLMCalls < 0 {
		return invalid("proposal_record", "negative count")
	}
	return nil
}

// Structure is a crystal structure on the wire, in the format Crucible also
// asks of LLMs: a formula, the lattice vectors as rows (Å), element symbols
// and fractional coordinates.
type Structure struct {
	Formula string        `json:"formula"`
	Lattice [3][3]float64 `json:"lattice"`
	Species []string      `json:"species"`
	Coords  [][3]float64  `json:"coords"`
}

// StructureOf converts a crystal structure to its wire form.
func StructureOf(s *crystal.Structure) Structure {
	out := Structure{
		Formula: s.Composition().ReducedFormula(),
		Lattice: s.Lattice.Matrix(),
		Species: make([]string, len(s.Species)),
		Coords:  make([][3]float64, len(s.Frac)),
	}
	for i, e := range s.Species {
		out.Species[i] = e.Symbol()
		out.Coords[i] = s.Frac[i]
	}
	return out
}

// Crystal converts the wire form to a crystal structure; the formula is
// not checked here (the oracle's validity checks report a mismatch).
func (s Structure) Crystal() (*crystal.Structure, error) {
	l, err := crystal.NewLattice(s.Lattice)
	if err != nil {
		return nil, err
	}
	if len(s.Species) != len(s.Coords) {
		return nil, fmt.Errorf("%w: %d species but %d coordinates", crystal.ErrBadStructure, len(s.Species), len(s.Coords))
	}
	species := make([]crystal.Element, len(s.Species))
	frac := make([]crystal.Vec3, len(s.Coords))
	for i, sym := range s.Species {
		e, err := crystal.ElementBySymbol(sym)
		if err != nil {
			return nil, fmt.Errorf("species[%d]: %w", i, err)
		}
		species[i] = e
		frac[i] = s.Coords[i]
	}
	return crystal.NewStructure(l, species, frac)
}

// Fingerprint is crystal.Fingerprint of the structure.
func (s Structure) Fingerprint() (string, error) {
	cs, err := s.Crystal()
	if err != nil {
		return "", err
	}
	return crystal.Fingerprint(cs)
}

func (s Structure) validate(field string) error {
	if len(s.Species) == 0 {
		return invalid(field+".species", "empty")
	}
	if len(s.Species) != len(s.Coords) {
		return invalid(field+".coords", "%d coordinates for %d species", len(s.Coords), len(s.Species))
	}
	for i, row := range s.Lattice {
		for j, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return invalid(fmt.Sprintf("%s.lattice[%d][%d]", field, i, j), "%v", x)
			}
		}
	}
	for i, c := range s.Coords {
		for j, x := range c {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return invalid(fmt.Sprintf("%s.coords[%d][%d]", field, i, j), "%v", x)
			}
		}
	}
	return nil
}

// Candidate is one proposed structure with its provenance.
type Candidate struct {
	Schema     int    `json:"schema"`
	ID         string `json:"id"`
	Campaign   string `json:"campaign"`
	Episode    int    `json:"episode"`
	Generation int    `json:"generation"`
	Index      int    `json:"index"`
	Island     int    `json:"island"`
	// Seed marks a known material that starts an island; seeds are
	// evaluated but count neither against the budget nor in the metrics.
	Seed      bool      `json:"seed,omitempty"`
	Structure Structure `json:"structure"`
	// Formula is the reduced formula of the structure.
	Formula string `json:"formula"`
	// Fingerprint keys structural duplicates within the campaign
	// (crystal.Fingerprint). It is empty when no other structure of the
	// candidate's reduced formula was in the campaign when it was proposed:
	// there was nothing to tell it from, so none was computed.
	Fingerprint string `json:"fingerprint"`
	// Parents are the candidate ids the operator started from.
	Parents []string `json:"parents,omitempty"`
	// Operator is the generator's operation ("substitute_same_group",
	// "crossover", "llm", …).
	Operator string `json:"operator"`
	// Rule is the chemistry rule the generator says it applied.
	Rule      string `json:"rule,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	Generator string `json:"generator"`
	// Known marks a reduced formula present in the reference data: the
	// generator reproduced a known material (LLEMA's memorisation).
	Known bool `json:"known,omitempty"`
	// HullFinds, when set, is how many of the campaign's finds (its
	// candidates on the hull, in the order recorded) extend the reference
	// phases of this candidate's stability: those recorded when it was
	// proposed, in an ordered campaign. Unset: every find there is when it
	// is evaluated.
	HullFinds  *int      `json:"hull_finds,omitempty"`
	ProposedAt time.Time `json:"proposed_at"`
}

// CandidateID is the id of candidate i of generation g.
func CandidateID(campaign string, g, i int) string {
	return fmt.Sprintf("%s-g%d-c%d", campaign, g, i)
}

// SeedCandidateID is the id of seed material i of a campaign.
func SeedCandidateID(campaign string, i int) string {
	return fmt.Sprintf("%s-seed%d", campaign, i)
}

// MsgID is the candidate's deterministic message id.
func (c *Candidate) MsgID() string { return "candidate/" + c.ID }

// Validate names the bad field.
func (c *Candidate) Validate() error {
	if err := checkSchema("candidate", c.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(c.Campaign); err != nil {
		return invalid("candidate.campaign", "%v", err)
	}
	want := CandidateID(c.Campaign, c.Generation, c.Index)
	if c.Seed {
		want = SeedCandidateID(c.Campaign, c.Index)
	}
	if c.ID != want {
		return invalid("candidate.id", "%q, want %q for its campaign, generation and index", c.ID, want)
	}
	if c.Island < 0 || c.Island >= MaxIslands {
		return invalid("candidate.island", "%d outside [0, %d)", c.Island, MaxIslands)
	}
	if c.Operator == "" {
		return invalid("candidate.operator", "empty")
	}
	return c.Structure.validate("candidate.structure")
}
