package messages

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/crucible-sci/crucible/pkg/task"
)

// Errors of AssembleSpec for what a campaign lacks.
var (
	ErrNoTask   = errors.New("no task")
	ErrNoBudget = errors.New("no budget")
)

// SpecSource is what AssembleSpec builds a campaign from, lowest
// precedence first: a spec file, a task (built in, by name, or read from a
// task file), and settings given one by one (command-line flags).
type SpecSource struct {
	// File is a campaign spec: YAML or JSON with the fields of
	// CampaignSpec, its task inline (DecodeSpec).
	File string
	// TaskName names a built-in task (task.ByName); TaskFile is a task
	// file holding one task (task.LoadFile). At most one of the two.
	TaskName, TaskFile string
	// Set holds the settings given one by one. Its non-zero fields among
	// ID, Budget, Islands, BatchSize, Episodes, TopK, MaxInFlight, Seed,
	// StabilityThreshold, Oracle, Generator's Kind, Model, Temperature,
	// MaxLLMCalls and MaxLLMTokens and Reflector's Mode and Model replace the spec's, and
	// Ordered set sets it; the others are ignored.
	Set CampaignSpec
	// SeededID derives the id of a campaign without one from its seed
	// ("<task slug>-s<seed>") instead of a random suffix, when the seed
	// was given: a run that is reproduced gets the same ids. Only for a
	// campaign alone on its servers (crucible local's embedded ones).
	SeededID bool
}

// AssembleSpec builds the campaign of src, gives it a random seed and an
// id (the task's name as a slug and a random suffix) when it has none,
// fills the defaults and validates it. The issues are the task file's
// warnings. A campaign without a task is ErrNoTask, without a budget
// ErrNoBudget.
func AssembleSpec(src SpecSource) (*CampaignSpec, []task.Issue, error) {
	spec := &CampaignSpec{}
	if src.File != "" {
		data, err := os.ReadFile(src.File)
		if err != nil {
			return nil, nil, err
		}
		if spec, err = DecodeSpec(data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", src.File, err)
		}
	}
	var issues []task.Issue
	switch {
	case src.TaskName != "" && src.TaskFile != "":
		return nil, nil, errors.New("a task name and a task file: give one")
	case src.TaskName != "":
		t, err := task.ByName(src.TaskName)
		if err != nil {
			return nil, nil, err
		}
		spec.Task = t
	case src.TaskFile != "":
		tasks, is, err := task.LoadFile(src.TaskFile)
		if err != nil {
			return nil, is, err
		}
		if len(tasks) != 1 {
			return nil, is, fmt.Errorf("%s holds %d tasks; a campaign needs one", src.TaskFile, len(tasks))
		}
		spec.Task, issues = tasks[0], is
	case spec.Task.Name == "":
		return nil, nil, ErrNoTask
	}
	spec.override(&src.Set)
	seeded := spec.Seed != 0
	if spec.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		for _, x := range b {
			spec.Seed = spec.Seed<<8 | uint64(x)
		}
	}
	if spec.ID == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		slug := MemoryContextOf(spec.Task.Name)[len("task-"):]
		if len(slug) > 40 {
			slug = slug[:40]
		}
		spec.ID = slug + "-" + hex.EncodeToString(b[:])
		if src.SeededID && seeded {
			spec.ID = fmt.Sprintf("%s-s%d", slug, spec.Seed)
		}
	}
	if spec.Budget == 0 {
		return nil, issues, ErrNoBudget
	}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return nil, issues, err
	}
	return spec, issues, nil
}

// override replaces the fields of c that SpecSource.Set may give by o's
// non-zero ones.
func (c *CampaignSpec) override(o *CampaignSpec) {
	set := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	set(&c.Budget, o.Budget)
	set(&c.Islands, o.Islands)
	set(&c.BatchSize, o.BatchSize)
	set(&c.Episodes, o.Episodes)
	set(&c.TopK, o.TopK)
	set(&c.MaxInFlight, o.MaxInFlight)
	set(&c.Generator.MaxLLMCalls, o.Generator.MaxLLMCalls)
	set(&c.Generator.MaxLLMTokens, o.Generator.MaxLLMTokens)
	if o.ID != "" {
		c.ID = o.ID
	}
	if o.Generator.Kind != "" {
		c.Generator.Kind = o.Generator.Kind
	}
	if o.Generator.Model != "" {
		c.Generator.Model = o.Generator.Model
	}
	if o.Reflector.Mode != "" {
		c.Reflector.Mode = o.Reflector.Mode
	}
	if o.Reflector.Model != "" {
		c.Reflector.Model = o.Reflector.Model
	}
	if o.Judge.Debate != "" {
		c.Judge.Debate = o.Judge.Debate
	}
	set(&c.Judge.MaxDebates, o.Judge.MaxDebates)
	if o.Generator.Temperature != 0 {
		c.Generator.Temperature = o.Generator.Temperature
	}
	if o.StabilityThreshold != 0 {
		c.StabilityThreshold = o.StabilityThreshold
	}
	if o.Seed != 0 {
		c.Seed = o.Seed
	}
	if o.Ordered {
		c.Ordered = true
	}
	if o.Oracle != "" {
		c.Oracle = o.Oracle
	}
}

// DecodeSpec reads a campaign spec from YAML or JSON (JSON is YAML): the
// fields of CampaignSpec, its task inline with the fields of task.Task.
// An unknown field is an error. Defaults are not applied.
func DecodeSpec(data []byte) (*CampaignSpec, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	spec := &CampaignSpec{}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return nil, err
	}
	return spec, nil
}
