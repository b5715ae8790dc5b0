package cgcnn

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// TestLoadCheckpoints loads every published checkpoint and checks what the
// file says about itself.
func TestLoadCheckpoints(t *testing.T) {
	dir := testbed.DataPath(t, "models", "cgcnn")
	for _, name := range checkpointNames {
		m, err := LoadCheckpoint(filepath.Join(dir, name+checkpointSuffix))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Name != name {
			t.Errorf("name %q, want %q", m.Name, name)
		}
		if m.AtomFeaLen != 64 || m.HFeaLen != 32 || m.NConv != 4 || m.NH != 1 || m.InputLen() != 92 {
			t.Errorf("%s: sizes %d/%d/%d/%d/%d, want 64/32/4/1/92", name, m.AtomFeaLen, m.HFeaLen, m.NConv, m.NH, m.InputLen())
		}
		wantTask := Regression
		if name == "semi-metal-classification" {
			wantTask = Classification
		}
		if m.Task != wantTask {
			t.Errorf("%s: task %v, want %v", name, m.Task, wantTask)
		}
		if m.NeedsFullExpansion() {
			t.Errorf("%s: the Gaussian window's truncation bound fails", name)
		}
	}

	// Values read by torch.load (torch 1.13) from band-gap.pth.tar.
	m, err := LoadCheckpoint(filepath.Join(dir, "band-gap"+checkpointSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if m.Mean != 2.353832203000784 || m.Std != 1.4802391239920374 {
		t.Errorf("normalizer %v ± %v, want 2.353832203000784 ± 1.4802391239920374", m.Mean, m.Std)
	}
	// embedding.weight[0, :3], stored transposed (and maybe in panels):
	// recover it through the embedding of unit vectors.
	for k, want := range []float64{-0.034874, -0.153511, 0.150021} {
		x := make([]float64, m.InputLen())
		x[k] = 1
		out := make([]float64, m.AtomFeaLen)
		zero := make([]float64, m.AtomFeaLen)
		matmulBias(out, x, m.embW, zero, 1, m.AtomFeaLen, m.InputLen())
		if math.Abs(out[0]-want) > 5e-7 {
			t.Errorf("embedding.weight[0,%d] = %v, want %v", k, out[0], want)
		}
	}
}

// TestLoadRejectsBadFiles feeds the loader variants of a real checkpoint
// and files that are not checkpoints: each must fail with ErrCheckpoint
// and a message that says what was expected.
func TestLoadRejectsBadFiles(t *testing.T) {
	good, err := os.ReadFile(testbed.DataPath(t, "models", "cgcnn", "band-gap"+checkpointSuffix))
	if err != nil {
		t.Fatal(err)
	}
	patched := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// The shape (128, 169) of fc_full.weight appears as BININT1 128,
	// BININT1 169, TUPLE2: first in the four state_dict entries, then in
	// the optimizer's momentum buffers.
	shape := []byte{'K', 0x80, 'K', 0xa9, 0x86}

	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "magic number"},
		{"text", []byte("this is not a checkpoint\n"), "unknown pickle opcode"},
		{"zip", []byte("PK\x03\x04rest of a zip"), "zip archive"},
		{"wrong magic", patched(func(b []byte) []byte { b[5] ^= 0xff; return b }), "magic number"},
		{"wrong protocol", patched(func(b []byte) []byte {
			i := bytes.Index(b, []byte{'M', 0xe9, 0x03})
			b[i+1] = 0xea
			return b
		}), "protocol version"},
		{"truncated in header", good[:30], "sys info"},
		{"truncated in object", good[:5000], "saved object"},
		{"truncated in data", good[:len(good)-1000], "truncated in the data"},
		{"storage count", patched(func(b []byte) []byte {
			// The first storage's element count follows the key list.
			i := bytes.LastIndex(b[:12000], []byte{'e', '.'}) + 2
			b[i]++
			return b
		}), "elements, the saved object declares"},
		{"shape", patched(func(b []byte) []byte {
			i := 0
			for range 3 { // the third: convs.2
				i += bytes.Index(b[i:], shape) + 1
			}
			b[i-1+3] = 0xaa // 169 → 170
			return b
		}), "state_dict key convs.2.fc_full.weight: want shape [128 169], got [128 170]"},
		{"missing key", patched(func(b []byte) []byte {
			i := bytes.Index(b, []byte("fc_out.bias"))
			copy(b[i:], "fc_out.biaz")
			return b
		}), `state_dict has no "fc_out.bias"`},
		{"task", patched(func(b []byte) []byte {
			// args["task"] comes after args["data_options"], which also
			// names the task.
			i := bytes.LastIndex(b, []byte("regression"))
			copy(b[i:], "regressio_")
			return b
		}), `args["task"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatalf("loaded a %v model, want an error", m.Task)
			}
			if !errors.Is(err, ErrCheckpoint) {
				t.Errorf("error %q does not wrap ErrCheckpoint", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}

	t.Run("file name in error", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "broken.pth.tar")
		if err := os.WriteFile(path, good[:100], 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCheckpoint(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v does not name the file", err)
		}
	})
}

// TestLoadSurvivesCorruption flips random bytes of a real checkpoint: the
// loader must return a model or an error, never panic or hang.
func TestLoadSurvivesCorruption(t *testing.T) {
	good, err := os.ReadFile(testbed.DataPath(t, "models", "cgcnn", "semi-metal-classification"+checkpointSuffix))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	pickles := 12000 // the pickles end before byte 11500; the rest is float data
	for i := 0; i < 150; i++ {
		b := bytes.Clone(good)
		for range 1 + rng.IntN(3) {
			pos := rng.IntN(pickles)
			if i%4 == 0 {
				pos = rng.IntN(len(b))
			}
			b[pos] = byte(rng.IntN(256))
		}
		if i%10 == 0 {
			b = b[:rng.IntN(len(b))]
		}
		m, err := Load(bytes.NewReader(b))
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
	}
}

// FuzzLoad: the loader never panics. The seeds are the real checkpoint and
// pieces of it, when the data folder is present.
func FuzzLoad(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03."))
	if dir, ok := testbed.FindDataDir(); ok {
		if good, err := os.ReadFile(filepath.Join(dir, "models", "cgcnn", "band-gap"+checkpointSuffix)); err == nil {
			f.Add(good[:12000]) // the pickles; their storages are missing
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Load(bytes.NewReader(data))
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
	})
}

// TestPickleLen checks the opcode walk on hand-assembled pickles.
func TestPickleLen(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		n    int
		err  string
	}{
		{"int", "\x80\x02K\x05.rest", 5, ""},
		{"unicode", "X\x03\x00\x00\x00abc.", 9, ""},
		{"global", "ctorch\nFloatStorage\n.", 21, ""},
		{"long length", "X\xff\xff\xff\x7fabc.", 0, "needs 2147483647 more bytes"},
		{"8-byte length", "\x8e\xff\xff\xff\xff\xff\xff\xff\xffab.", 0, "more bytes"},
		{"unterminated", "cfoo\nbar", 0, "unterminated line"},
		{"no stop", "K\x01K\x02", 0, "no STOP"},
		{"bad opcode", "\xff.", 0, "unknown pickle opcode 0xff"},
	} {
		n, err := pickleLen([]byte(tc.data))
		switch {
		case tc.err == "" && (err != nil || n != tc.n):
			t.Errorf("%s: %d, %v; want %d", tc.name, n, err, tc.n)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.err)
		}
	}
}
