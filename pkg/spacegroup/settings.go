package spacegroup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// ErrUnknownSymbol is returned for a space-group symbol or number that
// names none of the tabulated settings.
var ErrUnknownSymbol = errors.New("unknown space-group symbol")

// Setting is one of the 530 tabulated settings of a space-group type: the
// type's ITA number and the setting's symbols. Its operations are generated
// from the Hall symbol on first use.
type Setting struct {
	// HallNumber is the setting's position (1–530) in Hall's list, the
	// numbering spglib calls hall_number.
	HallNumber int
	// Number is the ITA number of the space-group type, 1–230.
	Number int
	// Hall is the Hall symbol ("-P 2ybc").
	Hall string
	// HM is the Hermann–Mauguin symbol of this setting as ITA writes it,
	// screw axes with an underscore ("P 1 2_1/c 1", "P b n m", "R -3 m").
	HM string
	// Full is the full HM symbol of the setting ("P 2_1/b 2_1/n 2_1/m").
	Full string
	// Short is the short symbol, without spaces ("P2_1/c", "Pbnm",
	// "Fd-3m"); for monoclinic settings it is the type's symbol.
	Short string
	// Choice names the setting among the type's: unique axis and cell
	// choice ("b1", "-c2"), axis permutation ("cab"), origin choice
	// ("1", "2", "1cab"), rhombohedral or hexagonal axes ("R", "H"); empty
	// for a type's only setting.
	Choice string
	// Schoenflies is the Schoenflies symbol ("C2h^5").
	Schoenflies string

	names []string // every HM form naming this setting
	once  sync.Once
	hall  *Hall
	err   error
	reps  []Op // one operation per rotation
}

// Ops returns the setting's operations in its conventional cell (centring
// translations included, the identity first). The slice is shared: do not
// modify it.
func (s *Setting) Ops() []Op {
	h := s.parsed()
	return h.Ops
}

// Centring returns the setting's centring translations (without zero), in
// 1/Den.
func (s *Setting) Centring() [][3]int { return s.parsed().Centring }

// Lattice returns the setting's lattice letter (P, A, B, C, I, R, F).
func (s *Setting) Lattice() byte { return s.parsed().Lattice }

// cosets returns one operation per distinct rotation (the cosets of the
// lattice translations).
func (s *Setting) cosets() []Op {
	s.parsed()
	return s.reps
}

func (s *Setting) parsed() *Hall {
	s.once.Do(func() {
		s.hall, s.err = ParseHall(s.Hall)
		if s.err != nil {
			return
		}
		seen := map[[3][3]int]bool{}
		for _, o := range s.hall.Ops {
			if !seen[o.Rot] {
				seen[o.Rot] = true
				s.reps = append(s.reps, o)
			}
		}
	})
	if s.err != nil {
		// The table is fixed and every entry is checked by the tests.
		panic(fmt.Sprintf("spacegroup: tabulated Hall symbol %q: %v", s.Hall, s.err))
	}
	return s.hall
}

// System returns the crystal system of an ITA number: triclinic (1–2),
// monoclinic (3–15), orthorhombic (16–74), tetragonal (75–142), trigonal
// (143–167), hexagonal (168–194) or cubic (195–230); "" outside 1–230.
func System(number int) string {
	switch {
	case number < 1 || number > 230:
		return ""
	case number <= 2:
		return "triclinic"
	case number <= 15:
		return "monoclinic"
	case number <= 74:
		return "orthorhombic"
	case number <= 142:
		return "tetragonal"
	case number <= 167:
		return "trigonal"
	case number <= 194:
		return "hexagonal"
	}
	return "cubic"
}

var (
	tableOnce sync.Once
	settings  []*Setting    // by HallNumber−1
	defaults  [231]*Setting // by ITA number
	byHM      map[string]*Setting
	byHallSym map[string]*Setting
)

// Settings returns the 530 settings in Hall's order.
func Settings() []*Setting {
	loadTable()
	return settings
}

// ByHallNumber returns setting n (1–530).
func ByHallNumber(n int) (*Setting, error) {
	loadTable()
	if n < 1 || n > len(settings) {
		return nil, fmt.Errorf("%w: Hall number %d is not in 1–%d", ErrUnknownSymbol, n, len(settings))
	}
	return settings[n-1], nil
}

// ByNumber returns the default setting of ITA number n (1–230): the
// standard setting of ITA, with unique axis b and cell choice 1 for the
// monoclinic groups, origin choice 2 (inversion centre at the origin) for
// the groups with two origins, and hexagonal axes for the rhombohedral
// groups — the setting crystallographic databases use.
func ByNumber(n int) (*Setting, error) {
	loadTable()
	if n < 1 || n > 230 {
		return nil, fmt.Errorf("%w: space-group number %d is not in 1–230", ErrUnknownSymbol, n)
	}
	return defaults[n], nil
}

// ByHall returns the tabulated setting whose Hall symbol is sym (compared
// ignoring case and runs of spaces, '=' read as '"').
func ByHall(sym string) (*Setting, error) {
	loadTable()
	if s, ok := byHallSym[hallKey(sym)]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: Hall symbol %q is not one of the 530 tabulated settings", ErrUnknownSymbol, sym)
}

// ByHM returns the setting a Hermann–Mauguin symbol names. Spaces and
// underscores are ignored and case does not matter, so "P 1 21/c 1",
// "P21/c", "P 2_1/c" and "p21/c" are the same symbol. A short monoclinic
// symbol names the unique-axis-b setting ("P 21/n" is "P 1 21/n 1"). A
// suffix ":1", ":2" (or " S", " Z" for origin choice 1 and 2), ":H" or ":R"
// (or " H", " R") picks the origin choice or the axes; without it the
// default of ByNumber applies. Older symbols are accepted: those of ITA
// before 2002 for the five groups with an e-glide (Abm2, Aba2, Cmca, Cmma,
// Ccca) and the cubic symbols without the bar on the three-fold axis
// ("F m 3 m", "I a 3 d").
func ByHM(sym string) (*Setting, error) {
	loadTable()
	key := hmKey(sym)
	if key == "" {
		return nil, fmt.Errorf("%w: empty Hermann–Mauguin symbol", ErrUnknownSymbol)
	}
	if s, ok := byHM[key]; ok {
		return s, nil
	}
	// Suffixes: "fd-3m:2", "r-3m:h", "r-3mh" (spaces were dropped).
	base, choice := key, ""
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		base, choice = key[:i], key[i+1:]
	} else if raw := strings.TrimSpace(sym); len(raw) > 2 && raw[len(raw)-2] == ' ' {
		base, choice = hmKey(raw[:len(raw)-2]), strings.ToLower(raw[len(raw)-1:])
	}
	switch choice {
	case "s":
		choice = "1"
	case "z":
		choice = "2"
	}
	if choice != "" {
		if s, ok := byHM[base+":"+choice]; ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: Hermann–Mauguin symbol %q", ErrUnknownSymbol, sym)
}

// hmKey is the lookup form of an HM symbol: no spaces or underscores,
// lower case.
func hmKey(s string) string {
	return strings.ToLower(hmDrop.Replace(strings.TrimSpace(s)))
}

var hmDrop = strings.NewReplacer(" ", "", "_", "", "\t", "")

func hallKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "=", `"`))
}

// oldSymbols maps the pre-2002 symbols of the e-glide groups to their
// current ones (ITA 5th ed., §1.3).
var oldSymbols = map[string]string{"A b m 2": "A e m 2", "A b a 2": "A e a 2", "C m c a": "C m c e", "C m m a": "C m m e", "C c c a": "C c c e"}

func loadTable() {
	tableOnce.Do(func() {
		byHM = map[string]*Setting{}
		byHallSym = map[string]*Setting{}
		for _, line := range strings.Split(strings.TrimSpace(settingTable), "\n") {
			f := strings.Split(line, "|")
			n, _ := strconv.Atoi(f[0])
			s := &Setting{HallNumber: len(settings) + 1, Number: n, Hall: f[1], Full: f[3], Short: f[4], Choice: f[5], Schoenflies: f[6]}
			parts := strings.Split(f[2], "=")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			s.HM = parts[0]
			if len(parts) > 1 {
				s.HM = parts[1]
			}
			s.names = append(parts, s.Full, s.Short)
			if short := monoclinicShort(s.Full); short != "" {
				s.names = append(s.names, short)
			}
			settings = append(settings, s)
			if _, dup := byHallSym[hallKey(s.Hall)]; !dup {
				byHallSym[hallKey(s.Hall)] = s // #68 lists two symbols twice
			}
		}
		for _, s := range settings {
			d := defaults[s.Number]
			if d == nil || (s.Choice == "2" && d.Choice == "1") {
				defaults[s.Number] = s
			}
		}
		// Cubic symbols as written before ITA 1983, without the bar on the
		// three-fold axis ("F m 3 m", "P a 3").
		for _, s := range settings {
			if s.Number >= 195 {
				for _, name := range s.names {
					if strings.Contains(name, "-3") {
						s.names = append(s.names, strings.ReplaceAll(name, "-3", "3"))
					}
				}
			}
		}
		for old, cur := range oldSymbols {
			for _, s := range settings {
				if s.HM == cur {
					s.names = append(s.names, old)
				}
			}
		}
		// A name claimed by several settings goes to the type's default
		// setting if it is among them, else to the first listed.
		for _, s := range settings {
			suffix := ""
			switch {
			case s.Choice == "H" || s.Choice == "R":
				suffix = ":" + strings.ToLower(s.Choice)
			case strings.HasPrefix(s.Choice, "1") || strings.HasPrefix(s.Choice, "2"):
				suffix = ":" + s.Choice[:1]
			}
			for _, name := range s.names {
				for _, key := range []string{hmKey(name), hmKey(name) + suffix} {
					if old, ok := byHM[key]; !ok || (s == defaults[s.Number] && old != defaults[old.Number]) {
						byHM[key] = s
					}
				}
			}
		}
	})
}

// monoclinicShort returns the short form of a monoclinic full symbol with
// two of its three axis positions "1" ("P 1 2_1/n 1" → "P 2_1/n"), or "".
func monoclinicShort(full string) string {
	f := strings.Fields(full)
	if len(f) != 4 {
		return ""
	}
	var rest []string
	for _, x := range f[1:] {
		if x != "1" {
			rest = append(rest, x)
		}
	}
	if len(rest) != 1 {
		return ""
	}
	return f[0] + " " + rest[0]
}
