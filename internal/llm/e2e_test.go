package llm_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// demoHeader matches a demonstration line of the prompt: "- GaN: Band gap
// …" (seeds say "(known material)").
var demoHeader = regexp.MustCompile(`(?m)^- ([A-Za-z0-9().]+)( \(known material\))?: `)

// demonstrations returns the demonstration lines of a prompt's successes
// and failures: formula and whether it is a known (seed) material.
func demonstrations(prompt string) [][]string {
	start := strings.Index(prompt, "## Successful candidates")
	end := strings.Index(prompt, "## Your answer")
	if r := strings.Index(prompt, "## Rejected proposals"); r >= 0 {
		end = r
	}
	if start < 0 || end < start {
		return nil
	}
	return demoHeader.FindAllStringSubmatch(prompt[start:end], -1)
}

// TestCampaignAgainstFakeModel runs a whole campaign with generator llm —
// proposer, evaluator (CGCNN and the convex hull on the reference data),
// reflector and judge — against a fake model that answers each prompt with
// same-group substitutions of the demonstrations it finds in it. The
// islands fill with evaluated candidates, and later prompts show the
// model's earlier candidates as successes and failures.
func TestCampaignAgainstFakeModel(t *testing.T) {
	data := testbed.DataDir(t)
	_, oracle, err := wire.Oracle(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := wire.Reference(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Substitute(7))
	client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake-substituter"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := local.Start(ctx, local.Options{
		NATSURL: testbed.NATSURL(), RedisURL: testbed.RedisURL(), Namespace: testsrv.Namespace(), MemoryStreams: true,
		Oracle: oracle,
		Proposer: func(s *store.Store) proposer.Config {
			gen, err := llm.NewGenerator(client, s)
			if err != nil {
				t.Error(err)
			}
			return wire.Proposer(db, s, wire.ProposerOptions{LLM: gen})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Purge(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		st.Close()
	})
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	// k = 4 demonstrations of each kind: the two seeds of an island are
	// usually its best successes, so with LLEMA's k = 2 the model's own
	// successes would rarely show.
	spec := &messages.CampaignSpec{ID: "llm-e2e", Task: tk, Budget: 36, Seed: 7, TopK: 4,
		Generator: messages.GeneratorSpec{Kind: messages.GeneratorLLM}}
	res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary
	if sum.State != messages.StateCompleted || sum.Evaluated != spec.Budget || sum.Generator != messages.GeneratorLLM {
		t.Fatalf("summary: %s, %d of %d evaluated (%s)", sum.State, sum.Evaluated, spec.Budget, res.Status.Message)
	}
	if sum.LLMCalls == 0 || sum.PromptTokens == 0 || sum.CompletionTokens == 0 || sum.PromptTokensPerCall == 0 || sum.LLMRequests < sum.LLMCalls {
		t.Fatalf("LLM accounting: %+v", sum.Counters)
	}
	if sum.Hits > 0 && sum.TokensPerHit == 0 {
		t.Fatalf("tokens per hit missing with %d hits", sum.Hits)
	}
	if len(sum.MemorizationByGeneration) == 0 {
		t.Fatal("no memorisation per generation")
	}

	// The islands filled: every evaluation went to an island's pools.
	stats, err := st.Store.Islands(ctx, spec.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range stats {
		total += s.N
	}
	if total != sum.Evaluated+sum.Seeds {
		t.Fatalf("%d evaluations on the islands, want %d", total, sum.Evaluated+sum.Seeds)
	}

	// Later prompts show the model's own earlier candidates.
	made := map[string]int{} // formula → generation of the model's evaluated candidates
	for _, ev := range res.Evaluations {
		if g, ok := made[ev.Candidate.Formula]; !ok || ev.Candidate.Generation < g {
			made[ev.Candidate.Formula] = ev.Candidate.Generation
		}
	}
	shown := 0
	t.Logf("generation  island  prompt tokens  completion tokens  demonstrations  (estimates)")
	for _, p := range res.Prompts {
		demos := demonstrations(p.User)
		for _, d := range demos {
			if g, ok := made[d[1]]; ok && d[2] == "" && g < p.Generation {
				shown++
			}
		}
		t.Logf("%10d  %6d  %13d  %17d  %14d", p.Generation, p.Island, p.PromptTokens, p.CompletionTokens, len(demos))
		if p.Outcome != messages.PromptAnswered {
			t.Errorf("exchange %d of generation %d: %s %s", p.Index, p.Generation, p.Outcome, p.Error)
		}
	}
	t.Logf("%d demonstrations of the model's own earlier candidates in later prompts", shown)
	if shown == 0 {
		t.Fatal("no prompt showed a candidate the model made in an earlier generation")
	}
	if len(res.Prompts) < sum.LLMCalls {
		t.Fatalf("%d prompt records for %d calls", len(res.Prompts), sum.LLMCalls)
	}
	last := res.Prompts[len(res.Prompts)-1].User
	if !strings.Contains(last, "## Design rules") {
		t.Fatal("a late prompt has no design rules")
	}
	t.Logf("%d calls: %.0f prompt + %.0f completion tokens per call; %d hits, %d stable; %.0f tokens per hit; memorisation %.2f",
		sum.LLMCalls, sum.PromptTokensPerCall, sum.CompletionTokensPerCall, sum.Hits, sum.StableHits, sum.TokensPerHit, sum.MemorizationRate)
}
