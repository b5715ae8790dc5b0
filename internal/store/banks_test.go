package store

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// TestBankExportImport: a bank exported and imported under another
// context reads back the same, and a reflection already in it is not
// applied twice.
func TestBankExportImport(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	r := &messages.Reflection{Schema: messages.SchemaVersion, Campaign: "c1", Context: "task-a", Episode: 0, Bullets: []string{"b"},
		Directives: []messages.Directive{{Kind: messages.DirectiveCapComposition, Formula: "NaCl3", Limit: 3, Reason: "3 queries"}}}
	ops := []reflection.ExperienceOp{{Experience: reflection.Experience{Key: "comp:NaCl3", Text: "NaCl3 fails.", Kind: reflection.KindComposition, Support: 3, Outcome: reflection.OutcomeUnproductive}}}
	if _, err := s.ApplyReflection(ctx, "task-a", r.MsgID(), r, nil, ops); err != nil {
		t.Fatal(err)
	}
	d, err := s.ExportBank(ctx, "task-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reflections) != 1 || len(d.Directives) != 1 || len(d.Experiences) != 1 || d.Experiences[0].Outcome != reflection.OutcomeUnproductive {
		t.Fatalf("export %+v", d)
	}
	d.Context = "task-b"
	if err := s.ImportBank(ctx, d); err != nil {
		t.Fatal(err)
	}
	back, err := s.ExportBank(ctx, "task-b")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, d) {
		t.Errorf("imported\n%+v\nread back\n%+v", d, back)
	}
	if applied, err := s.ApplyReflection(ctx, "task-b", r.MsgID(), r, nil, ops); err != nil || applied {
		t.Errorf("a reflection of the imported bank applied again: %v %v", applied, err)
	}
	banks, err := s.Banks(ctx)
	if err != nil || !slices.Contains(banks, "task-a") || !slices.Contains(banks, "task-b") {
		t.Errorf("banks %v %v", banks, err)
	}
	bad := &BankDump{Context: "task-c", Experiences: []reflection.Experience{{Key: "comp:X"}}}
	if err := s.ImportBank(ctx, bad); err == nil {
		t.Error("a lesson without text was imported")
	}
}
