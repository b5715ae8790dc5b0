package proposer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadUserLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "limits.json")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	u, err := ReadUserLimits(write(`{"alice": {"max_budget": 5000, "max_campaigns": 3}, "*": {"max_campaigns": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		user, entry string
		want        UserLimit
	}{
		{"alice", "alice", UserLimit{MaxBudget: 5000, MaxCampaigns: 3}},
		{"bob", "*", UserLimit{MaxCampaigns: 1}},
		{"", "", UserLimit{}}, // a submission without a user
	} {
		if got, entry := u.of(c.user); got != c.want || entry != c.entry {
			t.Errorf("%q: %+v from %q, want %+v from %q", c.user, got, entry, c.want, c.entry)
		}
	}
	for text, want := range map[string]string{
		`{"alice": {"max_campaign": 3}}`:  `did you mean "max_campaigns"`,
		`{"alice": {"max_budget": -1}}`:   "negative",
		`{"al.ice": {"max_budget": 10}}`:  `"al.ice" is not a user name`,
		`{"alice": {"max_budget": "10"}}`: "max_budget",
		`[1]`:                             "limits",
	} {
		if _, err := ReadUserLimits(write(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", text, err, want)
		}
	}
	if _, err := ReadUserLimits(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file is no error")
	}
}
