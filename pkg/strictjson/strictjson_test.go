package strictjson

import (
	"errors"
	"strings"
	"testing"
)

type rules struct {
	Exclude []string `json:"exclude,omitempty"`
	Require []string `json:"require,omitempty"`
}

type doc struct {
	Budget int   `json:"budget"`
	Rules  rules `json:"rules"`
	Hidden int   `json:"-"`
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"budget": 3}`, ""},
		{`{"bugdet": 3}`, `unknown key "bugdet" (did you mean "budget"?)`},
		{`{"rules": {"exlude": ["O"]}}`, `unknown key "exlude" (did you mean "exclude"?)`},
		{`{"zzzzzzzz": 1}`, `unknown key "zzzzzzzz"`},
		{`{"budget": 3} {}`, "trailing data"},
	} {
		var d doc
		err := Decode([]byte(c.in), &d)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		case strings.HasPrefix(c.want, "unknown key") && !errors.Is(err, ErrUnknownKey):
			t.Errorf("%s: %v is not ErrUnknownKey", c.in, err)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"budget", "batch_size", "episodes", "exclude", "islands"}
	for key, want := range map[string]string{"bugdet": "budget", "Budget": "budget", "episode": "episodes", "exlude": "exclude", "colour": "", "batchsize": "batch_size"} {
		if got := Closest(key, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", key, got, want)
		}
	}
}
