package llm

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

//go:embed prompts
var promptFS embed.FS

// Template is one version of the prompt: the system message, the user
// message (text/template over PromptData) and the answer's JSON schema
// for structured output.
type Template struct {
	Version string
	system  string
	user    *template.Template
	Schema  json.RawMessage
}

// LoadTemplate loads prompts/<version> from the binary.
func LoadTemplate(version string) (*Template, error) {
	if version == "" || strings.ContainsAny(version, "/\\.") {
		return nil, fmt.Errorf("prompt template %q: want a version such as %q", version, DefaultTemplate)
	}
	dir := "prompts/" + version
	system, err := fs.ReadFile(promptFS, dir+"/system.tmpl")
	if err != nil {
		return nil, fmt.Errorf("prompt template %q: %w (versions: %s)", version, err, strings.Join(TemplateVersions(), ", "))
	}
	user, err := fs.ReadFile(promptFS, dir+"/user.tmpl")
	if err != nil {
		return nil, fmt.Errorf("prompt template %q: %w", version, err)
	}
	schema, err := fs.ReadFile(promptFS, dir+"/schema.json")
	if err != nil {
		return nil, fmt.Errorf("prompt template %q: %w", version, err)
	}
	if !json.Valid(schema) {
		return nil, fmt.Errorf("prompt template %q: schema.json is not valid JSON", version)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return nil, err
	}
	t, err := template.New("user").Funcs(template.FuncMap{"join": strings.Join}).Option("missingkey=error").Parse(string(user))
	if err != nil {
		return nil, fmt.Errorf("prompt template %q: %w", version, err)
	}
	return &Template{Version: version, system: strings.TrimSpace(string(system)), user: t, Schema: compact.Bytes()}, nil
}

// TemplateVersions lists the embedded prompt versions.
func TemplateVersions() []string {
	entries, _ := fs.ReadDir(promptFS, "prompts")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// PromptData is what a prompt template sees.
type PromptData struct {
	Task        TaskView
	Generation  int
	N           int // candidates asked for
	Rules       []evolve.Rule
	Directives  []string
	Reflections []string
	Successes   []Demo
	Failures    []Demo
	Rejects     []Demo
}

// TaskView is the task in words.
type TaskView struct {
	Name, Description, Goal string
	Constraints             []string // "Band gap ≥ 2.5 eV"
	Elements                []string // element rules in words
	Structure               []string // structure, formula and anion rules in words
	Notes                   []string
	Stability               string // the stability threshold, eV/atom
}

// Demo is one in-context demonstration: an evaluated candidate of the
// island (a success or a failure, with its properties and why it failed)
// or a rejected proposal (with the reasons).
type Demo struct {
	Formula    string
	Seed       bool
	Properties []string // "Band gap 3.1 eV ✓"
	Stability  string   // "E_hull 0.021 eV/atom (stable)"
	Reasons    []string // why it failed or was rejected
	Structure  string   // compact candidate JSON
	generation int
	kind       int // 0 reject, 1 failure, 2 success: the order of dropping
	score      float64
}

// maxDirectives bounds the directives a prompt lists.
const maxDirectives = 12

// NewPromptData gathers the prompt's content from a generation's input:
// the task and constraints in words, the sampled rules (none in generation
// 0), the directives in words, the reflections' bullets (newest first),
// the island's successes and failures with their properties, and its
// recent rejected proposals.
func NewPromptData(in *proposer.Input) *PromptData {
	spec := in.Spec
	d := &PromptData{Generation: in.Request.Generation, N: in.Request.Slots}
	t := spec.Task
	d.Task = TaskView{Name: t.Name, Description: t.Description, Goal: t.Goal, Elements: t.Elements.Describe(), Structure: t.DescribeStructure(), Notes: t.Notes,
		Stability: strconv.FormatFloat(spec.StabilityThreshold, 'f', -1, 64)}
	for _, c := range t.Constraints {
		d.Task.Constraints = append(d.Task.Constraints, c.Describe())
	}
	for _, i := range in.Rules {
		if i >= 0 && i < len(evolve.Rules) {
			d.Rules = append(d.Rules, evolve.Rules[i])
		}
	}
	sort.Slice(d.Rules, func(i, j int) bool { return d.Rules[i].Number < d.Rules[j].Number })
	for _, dir := range in.Directives {
		if len(d.Directives) == maxDirectives {
			break
		}
		if s := describeDirective(dir); s != "" {
			d.Directives = append(d.Directives, s)
		}
	}
	for _, r := range in.Reflections {
		d.Reflections = append(d.Reflections, r.Bullets...)
	}
	for _, m := range in.Successes {
		d.Successes = append(d.Successes, demo(spec, m, 2))
	}
	for _, m := range in.Failures {
		d.Failures = append(d.Failures, demo(spec, m, 1))
	}
	for _, m := range in.Rejects {
		d.Rejects = append(d.Rejects, demo(spec, m, 0))
	}
	return d
}

func describeDirective(d messages.Directive) string {
	why := ""
	if d.Reason != "" {
		why = " (" + d.Reason + ")"
	}
	switch d.Kind {
	case messages.DirectiveExcludeElement:
		return "Do not use " + d.Element + why
	case messages.DirectiveAvoidSystem:
		return "Avoid the " + d.System + " chemical system" + why
	case messages.DirectiveCapComposition:
		return fmt.Sprintf("%s may be evaluated at most %d times in all%s", d.Formula, d.Limit, why)
	}
	return ""
}

// demo describes a pool member: each constrained property with its value
// and whether it meets the constraint, the energy above hull, the reasons
// it failed, and its structure (rejected proposals go without: they are
// shown for their reasons).
func demo(spec *messages.CampaignSpec, m store.Member, kind int) Demo {
	d := Demo{Formula: m.Formula, Seed: m.Seed, generation: m.Generation, kind: kind, score: m.Score}
	for _, r := range m.Reasons {
		d.Reasons = append(d.Reasons, r.Code+": "+r.Detail)
	}
	if kind == 0 {
		return d
	}
	for _, mg := range m.Margins {
		d.Properties = append(d.Properties, describeMargin(spec, mg))
	}
	if m.EAboveHull != nil {
		word := "unstable"
		if *m.EAboveHull <= spec.StabilityThreshold {
			word = "stable"
		}
		d.Stability = fmt.Sprintf("E_hull %.3f eV/atom (%s)", *m.EAboveHull, word)
	}
	if s, err := m.Structure.Crystal(); err == nil {
		d.Structure = compactStructure(s)
	}
	return d
}

// describeMargin writes one constraint's outcome: "Band gap 3.12 eV ✓" or
// "Formation energy -0.41 eV/atom ✗ (needs ≤ -1)".
func describeMargin(spec *messages.CampaignSpec, mg messages.Margin) string {
	label, unit := mg.Property, ""
	if p, err := task.PropertyByName(mg.Property); err == nil {
		label, unit = p.Label, p.Unit
	}
	if unit != "" {
		unit = " " + unit
	}
	if mg.Missing {
		return label + " unknown ✗"
	}
	value := strconv.FormatFloat(mg.Value, 'g', 3, 64)
	if mg.Margin >= 0 {
		return label + " " + value + unit + " ✓"
	}
	need := ""
	for _, c := range spec.Task.Constraints {
		if c.Property != mg.Property {
			continue
		}
		l, u := c.Bounds()
		switch c.Kind {
		case task.Lower:
			need = "≥ " + strconv.FormatFloat(l, 'f', -1, 64)
		case task.Upper:
			need = "≤ " + strconv.FormatFloat(u, 'f', -1, 64)
		case task.Interval:
			need = strconv.FormatFloat(l, 'f', -1, 64) + "–" + strconv.FormatFloat(u, 'f', -1, 64)
		}
	}
	if need != "" {
		need = " (needs " + need + ")"
	}
	return label + " " + value + unit + " ✗" + need
}

// compactStructure writes s in the answer's format, compactly: lattice
// parameters to 4 decimals, fractional coordinates to 4.
func compactStructure(s *crystal.Structure) string {
	c := crystal.CandidateFromStructure(s)
	p := c.Lattice.Parameters
	var b strings.Builder
	b.WriteString(`{"formula":`)
	b.WriteString(strconv.Quote(c.Formula))
	fmt.Fprintf(&b, `,"lattice":{"a":%s,"b":%s,"c":%s,"alpha":%s,"beta":%s,"gamma":%s},"species":[`,
		rounded(p.A, 4), rounded(p.B, 4), rounded(p.C, 4), rounded(p.Alpha, 3), rounded(p.Beta, 3), rounded(p.Gamma, 3))
	for i, sp := range c.Species {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(sp))
	}
	b.WriteString(`],"coords":[`)
	for i, x := range c.Coords {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%s,%s,%s]", rounded(x[0], 4), rounded(x[1], 4), rounded(x[2], 4))
	}
	b.WriteString("]}")
	return b.String()
}

// rounded rounds x to d decimals and writes it in its shortest form.
func rounded(x float64, d int) string {
	p := math.Pow(10, float64(d))
	r := math.Round(x*p) / p
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Rendered is a prompt ready to send.
type Rendered struct {
	System, User string
	// Tokens is the prompt's estimated size.
	Tokens int
	// Dropped counts the demonstrations and reflections left out.
	Dropped int
}

// Render renders the prompt within budget tokens (as estimate counts
// them): while it is longer, the oldest demonstration is left out
// (rejected proposals before failures before successes of the same
// generation, the lowest score first), then the oldest reflection. A
// prompt that does not fit without any is sent as it is. d is not
// modified.
func (t *Template) Render(d *PromptData, budget int, estimate func(system, user string) int) (*Rendered, error) {
	work := *d
	work.Successes = append([]Demo(nil), d.Successes...)
	work.Failures = append([]Demo(nil), d.Failures...)
	work.Rejects = append([]Demo(nil), d.Rejects...)
	work.Reflections = append([]string(nil), d.Reflections...)
	dropped := 0
	for {
		var buf bytes.Buffer
		if err := t.user.Execute(&buf, &work); err != nil {
			return nil, fmt.Errorf("render prompt %s: %w", t.Version, err)
		}
		r := &Rendered{System: t.system, User: strings.TrimSpace(buf.String()) + "\n", Dropped: dropped}
		r.Tokens = estimate(r.System, r.User)
		if r.Tokens <= budget || !work.dropOldest() {
			return r, nil
		}
		dropped++
	}
}

// dropOldest removes the oldest demonstration, or else the oldest
// reflection (the last: reflections come newest first); false when
// nothing is left to remove.
func (d *PromptData) dropOldest() bool {
	type ref struct {
		list *[]Demo
		i    int
	}
	var oldest *ref
	var best Demo
	for _, l := range []*[]Demo{&d.Rejects, &d.Failures, &d.Successes} {
		for i, x := range *l {
			if oldest == nil || x.generation < best.generation ||
				(x.generation == best.generation && (x.kind < best.kind || (x.kind == best.kind && x.score < best.score))) {
				oldest, best = &ref{l, i}, x
			}
		}
	}
	if oldest != nil {
		*oldest.list = append((*oldest.list)[:oldest.i:oldest.i], (*oldest.list)[oldest.i+1:]...)
		return true
	}
	if n := len(d.Reflections); n > 0 {
		d.Reflections = d.Reflections[:n-1]
		return true
	}
	return false
}
