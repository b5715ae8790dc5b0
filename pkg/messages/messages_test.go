package messages

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

func validCampaign(t *testing.T) *CampaignSpec {
	t.Helper()
	tk, err := task.ByName("stable wide-bandgap semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	c := &CampaignSpec{ID: "wbg-1", Task: tk, Budget: 100, SubmittedAt: time.Unix(0, 0).UTC()}
	c.ApplyDefaults()
	return c
}

func TestCampaignDefaultsAndValidate(t *testing.T) {
	c := validCampaign(t)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Islands != 5 || c.BatchSize != 2 || c.TopK != 2 || c.RulesPerPrompt != 6 || c.StabilityThreshold != 0.1 || c.Generator.Kind != GeneratorEvolve {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if c.MemoryContext != "task-stable-wide-bandgap-semiconductors" {
		t.Errorf("memory context %q", c.MemoryContext)
	}
	cases := []struct {
		field string
		edit  func(*CampaignSpec)
	}{
		{"campaign.id", func(c *CampaignSpec) { c.ID = "has space" }},
		{"campaign.id", func(c *CampaignSpec) { c.ID = "" }},
		{"campaign.budget", func(c *CampaignSpec) { c.Budget = -1 }},
		{"campaign.islands", func(c *CampaignSpec) { c.Islands = 1000 }},
		{"campaign.generator.kind", func(c *CampaignSpec) { c.Generator.Kind = "magic" }},
		{"campaign.generator.temperature", func(c *CampaignSpec) { c.Generator.Temperature = 7 }},
		{"campaign.stability_threshold", func(c *CampaignSpec) { c.StabilityThreshold = -0.1 }},
		{"campaign.episodes", func(c *CampaignSpec) { c.Budget, c.Episodes = 2, 3 }},
		{"campaign.task", func(c *CampaignSpec) { c.Task.Constraints = nil }},
		{"campaign.schema", func(c *CampaignSpec) { c.Schema = 99 }},
	}
	for _, tc := range cases {
		c := validCampaign(t)
		tc.edit(c)
		err := c.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v", tc.field, err)
		}
	}
}

func TestEpisodeBudget(t *testing.T) {
	c := validCampaign(t)
	c.Budget, c.Episodes = 10, 3
	got := []int{c.EpisodeBudget(0), c.EpisodeBudget(1), c.EpisodeBudget(2)}
	if got[0] != 4 || got[1] != 3 || got[2] != 3 {
		t.Fatalf("episode budgets %v", got)
	}
	for i, want := range []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2} {
		if e := c.EpisodeOf(i); e != want {
			t.Errorf("EpisodeOf(%d) = %d, want %d", i, e, want)
		}
	}
}

func candidate() *Candidate {
	return &Candidate{
		Schema: SchemaVersion, ID: CandidateID("wbg-1", 3, 1), Campaign: "wbg-1", Generation: 3, Index: 1,
		Island: 2, Operator: "substitute", Formula: "NaCl",
		Structure: Structure{Formula: "NaCl", Lattice: [3][3]float64{{5.6, 0, 0}, {0, 5.6, 0}, {0, 0, 5.6}},
			Species: []string{"Na", "Cl"}, Coords: [][3]float64{{0, 0, 0}, {.5, .5, .5}}},
	}
}

func TestCandidateRoundTripAndStrictDecode(t *testing.T) {
	c := candidate()
	data, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Candidate
	if err := Decode(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != c.ID || back.Structure.Species[1] != "Cl" {
		t.Fatalf("round trip: %+v", back)
	}
	s, err := back.Structure.Crystal()
	if err != nil || s.NumSites() != 2 {
		t.Fatalf("crystal: %v %v", s, err)
	}
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(string(data), `"schema"`, `"surprise":1,"schema"`, 1),
		"truncated":     string(data[:len(data)/2]),
		"trailing":      string(data) + "{}",
		"wrong schema":  strings.Replace(string(data), `"schema":1`, `"schema":2`, 1),
	} {
		if err := Decode([]byte(bad), &back); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestCandidateValidateNamesFields(t *testing.T) {
	cases := map[string]func(*Candidate){
		"candidate.id":               func(c *Candidate) { c.ID = "other" },
		"candidate.structure.coords": func(c *Candidate) { c.Structure.Coords = c.Structure.Coords[:1] },
		"candidate.structure.species": func(c *Candidate) {
			c.Structure.Species, c.Structure.Coords = nil, nil
		},
		"candidate.operator": func(c *Candidate) { c.Operator = "" },
		"candidate.island":   func(c *Candidate) { c.Island = -1 },
	}
	for field, edit := range cases {
		c := candidate()
		edit(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestEvaluationAndVerdictValidate(t *testing.T) {
	e := &Evaluation{Schema: SchemaVersion, ID: candidate().ID, Campaign: "wbg-1", Candidate: *candidate(), Valid: false, Feasible: true}
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "evaluation.valid") {
		t.Errorf("invalid but feasible: %v", err)
	}
	e.Feasible = false
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	v := &Verdict{Schema: SchemaVersion, ID: e.ID, Campaign: e.Campaign, Evaluation: *e, Checks: []Check{{Name: "x"}}}
	if err := v.Validate(); err == nil || !strings.Contains(err.Error(), "verdict.reasons") {
		t.Errorf("rejection without reason: %v", err)
	}
	v.Accepted = true
	if err := v.Validate(); err != nil || v.Subject() != "crucible.discoveries.wbg-1" {
		t.Errorf("accepted verdict: %v %s", err, v.Subject())
	}
}

func TestSubjects(t *testing.T) {
	if got := Subject(SubjectCandidates, "abc"); got != "crucible.candidates.abc" || CampaignOfSubject(got) != "abc" {
		t.Errorf("subject %q", got)
	}
	if got := DeadLetterSubject("CANDIDATES", "bad id!"); got != "crucible.deadletter.candidates.unknown" {
		t.Errorf("dead letter subject %q", got)
	}
	for _, c := range Consumers {
		found := false
		for _, s := range Streams {
			if s.Name == c.Stream {
				found = true
			}
		}
		if !found {
			t.Errorf("consumer %s reads unknown stream %s", c.Name, c.Stream)
		}
	}
}

func TestPromptValidate(t *testing.T) {
	valid := func() *Prompt {
		return &Prompt{Schema: SchemaVersion, Campaign: "wbg-1", Generation: 3, Attempt: 1, Index: 0, Outcome: PromptAnswered,
			Template: "v1", Model: "m", User: "…", PromptTokens: 10, CompletionTokens: 5, Requests: 1}
	}
	if err := valid().Validate(); err != nil {
		t.Fatal(err)
	}
	if got := valid().MsgID(); got != "prompt/wbg-1/g3/a1/0" {
		t.Fatalf("MsgID %q", got)
	}
	cases := []struct {
		field string
		edit  func(*Prompt)
	}{
		{"prompt.campaign", func(p *Prompt) { p.Campaign = "a b" }},
		{"prompt.generation", func(p *Prompt) { p.Generation = -1 }},
		{"prompt.attempt", func(p *Prompt) { p.Attempt = 0 }},
		{"prompt.index", func(p *Prompt) { p.Index = -1 }},
		{"prompt.tokens", func(p *Prompt) { p.PromptTokens = -1 }},
		{"prompt.outcome", func(p *Prompt) { p.Outcome = "maybe" }},
		{"prompt.answer", func(p *Prompt) { p.Answer = strings.Repeat("x", MaxPromptAnswer+1) }},
		{"prompt.schema", func(p *Prompt) { p.Schema = 99 }},
	}
	for _, c := range cases {
		p := valid()
		c.edit(p)
		if err := p.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

func TestLLMCallBudgetDefault(t *testing.T) {
	c := validCampaign(t)
	if c.Generator.MaxLLMCalls != 0 {
		t.Fatalf("evolve campaign got an LLM call budget %d", c.Generator.MaxLLMCalls)
	}
	tk, _ := task.ByName("stable wide-bandgap semiconductors")
	c = &CampaignSpec{ID: "llm-1", Task: tk, Budget: 61, Generator: GeneratorSpec{Kind: GeneratorLLM}}
	c.ApplyDefaults()
	if want := DefaultLLMCallsPerSlot * 31; c.Generator.MaxLLMCalls != want {
		t.Fatalf("default max_llm_calls %d, want %d", c.Generator.MaxLLMCalls, want)
	}
	c.Generator.MaxLLMCalls = -1
	if err := c.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "max_llm_calls") {
		t.Fatalf("negative budget: %v", err)
	}
	// Every kind of exchange gets its share: proposals, reflections and
	// debates (alone, or with the others).
	for _, k := range []struct {
		generator, reflector string
		want                 int
	}{
		{GeneratorLLM, ReflectorLLM, DefaultLLMCallsPerSlot*4 + DefaultLLMCallsPerReflection*2 + LLMCallsPerDebate(DefaultDebateRounds)*8},
		{GeneratorEvolve, ReflectorRules, LLMCallsPerDebate(DefaultDebateRounds) * 8},
	} {
		c = &CampaignSpec{ID: "llm-2", Task: tk, Budget: 8, Episodes: 2, Generator: GeneratorSpec{Kind: k.generator},
			Reflector: ReflectorSpec{Mode: k.reflector}, Judge: JudgeSpec{Debate: DebateLLM}}
		c.ApplyDefaults()
		if c.Generator.MaxLLMCalls != k.want {
			t.Errorf("%s, %s, debate llm: default max_llm_calls %d, want %d", k.generator, k.reflector, c.Generator.MaxLLMCalls, k.want)
		}
		before := c.Generator.MaxLLMCalls
		c.ApplyDefaults()
		if c.Generator.MaxLLMCalls != before {
			t.Errorf("defaults applied twice: max_llm_calls %d, then %d", before, c.Generator.MaxLLMCalls)
		}
	}
}

func TestEvaluationJudgeHeader(t *testing.T) {
	for _, c := range []struct {
		feasible, stable, seed bool
		want                   string
	}{
		{true, true, false, "yes"},
		{true, false, false, "no"},
		{false, true, false, "no"},
		{true, true, true, "no"},
	} {
		ev := &Evaluation{Feasible: c.feasible, Stable: c.stable, Candidate: Candidate{Seed: c.seed}}
		if got := ev.Headers()[HeaderJudge]; got != c.want || ev.ForJudge() != (c.want == "yes") {
			t.Errorf("feasible %v stable %v seed %v: header %q, want %q", c.feasible, c.stable, c.seed, got, c.want)
		}
	}
}

// TestEvaluationSpaceGroup: an evaluation carries its space group through
// encoding, one written before the field existed still decodes (without a
// group), and a group that is no space group is refused by name.
func TestEvaluationSpaceGroup(t *testing.T) {
	e := &Evaluation{Schema: SchemaVersion, ID: candidate().ID, Campaign: "wbg-1", Candidate: *candidate(), Valid: true,
		SpaceGroup: &spacegroup.Name{Number: 225, Symbol: "Fm-3m"}}
	data, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"space_group":{"number":225,"symbol":"Fm-3m"}`) {
		t.Errorf("encoded without its space group: %s", data)
	}
	var back Evaluation
	if err := Decode(data, &back); err != nil || back.SpaceGroup == nil || *back.SpaceGroup != *e.SpaceGroup {
		t.Fatalf("round trip: %+v, %v", back.SpaceGroup, err)
	}
	old := strings.Replace(string(data), `"space_group":{"number":225,"symbol":"Fm-3m"},`, "", 1)
	if old == string(data) {
		t.Fatal("the test's edit did not remove the space group")
	}
	var oldBack Evaluation
	if err := Decode([]byte(old), &oldBack); err != nil || oldBack.SpaceGroup != nil {
		t.Errorf("an evaluation without a space group: %+v, %v", oldBack.SpaceGroup, err)
	}
	for _, bad := range []spacegroup.Name{{Number: 0, Symbol: "P1"}, {Number: 231, Symbol: "X"}, {Number: 14}} {
		e.SpaceGroup = &bad
		if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "evaluation.space_group") {
			t.Errorf("space group %+v: %v", bad, err)
		}
	}
}

// TestDeadLetterMsgID: a message dead-lettered twice (redelivered) has one
// message id; another message at the same sequence — a NATS server that
// lost its last messages in a crash numbers new ones again — has its own.
func TestDeadLetterMsgID(t *testing.T) {
	a := &DeadLetter{Stream: "EVALUATIONS", Consumer: "judge", Sequence: 999, Data: []byte(`{"id":"a"}`)}
	again := *a
	again.Deliveries = 3
	b := *a
	b.Data = []byte(`{"id":"b"}`)
	if a.MsgID() != again.MsgID() {
		t.Errorf("one message, two ids: %s, %s", a.MsgID(), again.MsgID())
	}
	if a.MsgID() == b.MsgID() {
		t.Errorf("two messages at sequence 999, one id %s", a.MsgID())
	}
	if !strings.HasPrefix(a.MsgID(), "deadletter/EVALUATIONS/judge/999/") {
		t.Errorf("id %s", a.MsgID())
	}
}

func TestSubmitSubject(t *testing.T) {
	for _, c := range []struct{ user, subject, submitter string }{
		{"alice", "crucible.campaigns.submit.user.alice.c-1", "alice"},
		{"", "crucible.campaigns.submit.c-1", ""},
		// A name no subject token can carry submits without a user.
		{"al.ice", "crucible.campaigns.submit.c-1", ""},
		{"*", "crucible.campaigns.submit.c-1", ""},
	} {
		s := SubmitSubject(c.user, "c-1")
		if s != c.subject {
			t.Errorf("%q: subject %s, want %s", c.user, s, c.subject)
		}
		if got := SubmitterOfSubject(s); got != c.submitter {
			t.Errorf("%s: submitter %q, want %q", s, got, c.submitter)
		}
		if got := CampaignOfSubject(s); got != "c-1" {
			t.Errorf("%s: campaign %q", s, got)
		}
	}
	// A campaign named "user" is no user.
	if got := SubmitterOfSubject("crucible.campaigns.submit.user"); got != "" {
		t.Errorf("campaign user: submitter %q", got)
	}
}
