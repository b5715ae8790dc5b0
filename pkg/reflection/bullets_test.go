package reflection

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

func TestBullets(t *testing.T) {
	electrolytes, err := task.ByName("Solid-State Electrolytes")
	if err != nil {
		t.Fatal(err)
	}
	dielectrics, err := task.ByName("High-k Dielectrics")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   func(t *testing.T) Input
		want []string // substrings, each in some bullet
		not  []string // substrings in no bullet
	}{
		{
			name: "nothing evaluated",
			in: func(*testing.T) Input {
				in := input()
				in.Counters.Rejected, in.Counters.EmptyGenerations = 6, 2
				return in
			},
			want: []string{"Episode 1 evaluated no candidate (6 rejected by the proposer", "Stop-loss: give a composition at most 3 queries"},
		},
		{
			name: "exploit the hits, stop the failures",
			in:   fixture,
			want: []string{
				"Exploit Li3PO4 (3 hits and 2 stable of 4 queries), MgAl2O4",
				"keep at least half of the queries for other systems",
				"Stop: excluded Cl (15 queries over 4 compositions",
				"Lifted the cap on Li4P2O7",
				"Breadth fell from 0.533 to 0.318",
			},
		},
		{
			name: "below the hull is not an error",
			in:   fixture,
			want: []string{"MgAl2O4 (-0.03), Li3PO4 (-0.012) reached E_hull below 0 eV/atom: below the known hull, a potential new ground state, not an error"},
		},
		{
			name: "far below the hull is suspicious",
			in: func(*testing.T) Input {
				return input(stat("ZnO", 2, 2, 1, -0.4, 0.02), stat("GaN", 1, 1, 1, -0.02))
			},
			want: []string{"ZnO at -0.4 eV/atom lies more than 0.15 eV/atom below", "more likely a surrogate error"},
		},
		{
			name: "no hits: move toward the constraints",
			in: func(*testing.T) Input {
				in := input(stat("LiCoO2", 3, 1, 0, 0.05), stat("NaFeO2", 2, 0, 0, 0.3))
				in.Task = electrolytes
				return in
			},
			want: []string{
				"No candidate met every constraint in 5 evaluations (formation_energy_per_atom ≤ -1 eV/atom; band_gap ≥ 2 eV); 1 was stable, so the properties, not stability, are the bottleneck",
				"more negative formation energies come with large electronegativity differences",
				"wider gaps come with ionic bonding",
			},
		},
		{
			name: "no hits on a reference-only property",
			in: func(*testing.T) Input {
				in := input(stat("SrTiO3", 3, 1, 0))
				in.Task = dielectrics.Clone()
				in.Task.Constraints[0].Property = "dielectric_electronic"
				return in
			},
			want: []string{"(dielectric_electronic: known only for reference compounds, so a new composition has no value for it.)"},
		},
		{
			name: "hits that are not stable",
			in: func(*testing.T) Input {
				return input(stat("ZnO", 3, 0, 2, 0.13, 0.3), stat("GaN", 2, 0, 1, 0.24), stat("AlN", 2, 1, 0, 0.0))
			},
			want: []string{"3 candidates met every constraint but none was stable (E_hull ≤ 0.1 eV/atom) (closest: ZnO at 0.13, GaN at 0.24 eV/atom)"},
		},
		{
			name: "invalid structures",
			in: func(*testing.T) Input {
				in := input(stat("ZnO", 10, 1, 1, 0.01))
				in.Counters.Valid = 6
				return in
			},
			want: []string{"4 of 10 evaluated candidates (40%) were invalid structures"},
		},
		{
			name: "memorisation",
			in: func(*testing.T) Input {
				in := input(stat("ZnO", 4, 2, 2, 0), stat("GaN", 4, 1, 1, 0))
				in.Counters.Known = 3
				return in
			},
			want: []string{"3 of 8 evaluated candidates (38%) restate materials of the reference data"},
		},
		{
			name: "novelty is not success",
			in: func(*testing.T) Input {
				in := input(stat("ZnO", 4, 0, 1, 0.5), stat("GaN", 4, 1, 1, 0.05))
				in.Counters.Novel = 8
				return in
			},
			want: []string{"8 novel candidates but only 1 stable: novelty is not success"},
		},
		{
			name: "low breadth",
			in: func(*testing.T) Input {
				return input(stat("ZnO", 6, 2, 2, 0), stat("GaN", 2, 1, 1, 0))
			},
			want: []string{"Only 2 compositions over 8 queries (0.25 per query; ZnO alone took 75% of them)"},
		},
		{
			name: "healthy campaign: fallbacks complete the bullets",
			in: func(*testing.T) Input {
				return input(stat("ZnO", 1, 1, 1, 0), stat("GaN", 1, 1, 1, 0))
			},
			want: []string{"Stop-loss", "Aim every query at a stable hit"},
			// One hit of one query is no evidence to exploit.
			not: []string{"Breadth", "Only", "Exploit"},
		},
		{
			name: "a hit in a system with support is worth exploiting",
			in: func(*testing.T) Input {
				return input(stat("GaN", 1, 1, 1, 0), stat("Ga3N", 2, 0, 0, 0.4))
			},
			want: []string{"Exploit GaN (1 hit and 1 stable of 1 query)"},
		},
		{
			name: "no verbatim repeats of recent bullets",
			in: func(*testing.T) Input {
				in := input(stat("ZnO", 6, 2, 2, 0), stat("GaN", 2, 1, 1, 0))
				in.Recent = Reflect(in).Bullets
				return in
			},
			want: []string{"added no evidence that changes the lessons above"},
			not:  []string{"Only 2 compositions"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := Reflect(tc.in(t))
			if n := len(out.Bullets); n < MinBullets || n > MaxBullets {
				t.Errorf("%d bullets: %q", n, out.Bullets)
			}
			all := strings.Join(out.Bullets, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no bullet with %q in\n%s", w, all)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(all, w) {
					t.Errorf("a bullet with %q in\n%s", w, all)
				}
			}
			seen := map[string]bool{}
			for _, b := range out.Bullets {
				if seen[b] {
					t.Errorf("bullet twice: %q", b)
				}
				seen[b] = true
				if n := utf8.RuneCountInString(b); n > 600 {
					t.Errorf("bullet of %d characters: %q", n, b)
				}
			}
		})
	}
}

func TestBulletsValidateAsReflection(t *testing.T) {
	// Even an empty campaign gets MinBullets, so the reflection message
	// validates.
	out := Reflect(Input{Campaign: "c1"})
	r := messages.Reflection{Schema: messages.SchemaVersion, Campaign: "c1", Bullets: out.Bullets, Directives: out.Directives}
	if err := r.Validate(); err != nil || len(out.Bullets) != MinBullets {
		t.Errorf("%d bullets: %v", len(out.Bullets), err)
	}
}

func TestPropertyHint(t *testing.T) {
	tests := []struct {
		c    task.Constraint
		want string
	}{
		{task.AtLeast("band_gap", 2.5), "wider gaps"},
		{task.Between("band_gap", 2.5, 6.5), "wider gaps"},
		{task.Between("band_gap", 0.7, 2), "narrower gaps"},
		{task.AtMost("formation_energy_per_atom", 0), "more negative formation energies"},
		{task.AtLeast("bulk_modulus", 200), "stiffness comes with short, strong covalent bonds"},
		{task.AtMost("shear_modulus", 20), "softer lattices"},
		{task.AtMost("density", 3.5), "low density comes with light elements"},
		{task.AtLeast("density", 8), "heavy elements"},
		{task.AtLeast("efermi", 1), ""},
	}
	for _, tc := range tests {
		got := propertyHint(tc.c)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("propertyHint(%s) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
