package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalDebate(t *testing.T) {
	dir := t.TempDir()
	debated := `{"schema":1,"id":"c-g1-c0","campaign":"c","formula":"LiF","accepted":true,"checks":[{"name":"validity","passed":true}],"judged_by":"debate",` +
		`"debate":{"transcript_id":"c/c-g1-c0","mode":"offline","roles":["thermodynamics"],"rounds":[{"round":1,"positions":[],"agreement":1}],"converged":false,"verdict":"discovery","confidence":0.8,"report":{"rationale":"r","roles":null,"key_numbers":null,"next_calculation":"n"},"judge":"rules"}}`
	rules := `{"schema":1,"id":"c-g1-c1","campaign":"c","formula":"NaCl","accepted":false,"reasons":["x"],"checks":[{"name":"validity","passed":true}],"judged_by":"rules","judged_note":"the campaign's 1 debates (judge.max_debates) are spent"}`
	if err := os.WriteFile(filepath.Join(dir, "discoveries.jsonl"), []byte(debated+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "verdicts.jsonl"), []byte(rules+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, _, err := LocalDebate(dir, "c-g1-c0")
	if err != nil || tr.Formula != "LiF" || tr.Debate.Verdict != "discovery" {
		t.Fatalf("debate: %+v %v", tr, err)
	}
	if _, _, err := LocalDebate(dir, "c-g1-c1"); !errors.Is(err, ErrNoDebate) || !strings.Contains(err.Error(), "max_debates") {
		t.Fatalf("a hit judged by rules: %v", err)
	}
	if _, _, err := LocalDebate(dir, "nope"); !errors.Is(err, ErrNoDebate) {
		t.Fatalf("unknown hit: %v", err)
	}
	_, lines, err := LocalDebate(dir, "")
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], "discovery") || !strings.Contains(lines[1], "judged by rules") {
		t.Fatalf("lines %q %v", lines, err)
	}
}
