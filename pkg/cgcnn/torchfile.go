package cgcnn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// This file reads the legacy (pre-1.6, non-zip) PyTorch serialisation that
// torch.save wrote when the CGCNN checkpoints were published. The stream is
// (torch/serialization.py, _legacy_save):
//
//	pickle  magic number 0x1950a86a20f9469cfc6c
//	pickle  protocol version 1001
//	pickle  sys info {protocol_version, little_endian, type_sizes}
//	pickle  the saved object; tensors are _rebuild_tensor(storage, offset,
//	        size, stride) calls whose storages are persistent ids
//	        ('storage', type, key, location, size, view)
//	pickle  the storage keys, in the order their data follows
//	then, per key, a little-endian int64 element count and the raw
//	little-endian elements.
//
// gopickle decodes each pickle. Before a pickle is handed to it, pickleLen
// walks its opcodes and checks every length against the bytes that remain,
// so a corrupt length field is reported instead of making gopickle allocate
// gigabytes.

// ErrCheckpoint is returned for a file that is not a CGCNN checkpoint in the
// legacy PyTorch format, or whose contents do not describe the network.
var ErrCheckpoint = errors.New("not a CGCNN checkpoint")

// maxCheckpointBytes bounds what Load reads: the published checkpoints are
// under 1 MB.
const maxCheckpointBytes = 1 << 30

// legacyMagic is torch.serialization.MAGIC_NUMBER.
const legacyMagic = "1950a86a20f9469cfc6c"

// legacyProtocol is torch.serialization.PROTOCOL_VERSION.
const legacyProtocol = 1001

// storageType is a torch.<Type>Storage class named in the pickle.
type storageType struct {
	name     string
	elemSize int
}

// storageTypes lists the storage classes of the legacy format and their
// element sizes, so that the data of every storage (including optimizer
// state we do not use) can be stepped over.
var storageTypes = map[string]storageType{
	"FloatStorage":    {"FloatStorage", 4},
	"DoubleStorage":   {"DoubleStorage", 8},
	"HalfStorage":     {"HalfStorage", 2},
	"BFloat16Storage": {"BFloat16Storage", 2},
	"LongStorage":     {"LongStorage", 8},
	"IntStorage":      {"IntStorage", 4},
	"ShortStorage":    {"ShortStorage", 2},
	"CharStorage":     {"CharStorage", 1},
	"ByteStorage":     {"ByteStorage", 1},
	"BoolStorage":     {"BoolStorage", 1},
}

// storage is one storage of the file: its type, declared element count and,
// once read, its raw little-endian bytes.
type storage struct {
	typ  storageType
	key  string
	size int
	data []byte
}

// tensor is a view on a storage as rebuilt by torch._utils._rebuild_tensor.
type tensor struct {
	st     *storage
	offset int
	shape  []int
	stride []int
}

// rebuildTensor implements torch._utils._rebuild_tensor(storage, offset,
// size, stride) and _rebuild_tensor_v2 (the same plus requires_grad and
// hooks, which inference does not need).
type rebuildTensor struct{ v2 bool }

func (r rebuildTensor) Call(args ...any) (any, error) {
	want := 4
	if r.v2 {
		want = 6
	}
	if len(args) != want {
		return nil, fmt.Errorf("tensor rebuild with %d arguments, want %d", len(args), want)
	}
	st, ok := args[0].(*storage)
	if !ok {
		return nil, fmt.Errorf("tensor rebuild: first argument is %T, want a storage", args[0])
	}
	offset, ok := args[1].(int)
	if !ok || offset < 0 {
		return nil, fmt.Errorf("tensor rebuild: storage offset %v", args[1])
	}
	shape, err := intTuple(args[2])
	if err != nil {
		return nil, fmt.Errorf("tensor rebuild: size: %w", err)
	}
	stride, err := intTuple(args[3])
	if err != nil {
		return nil, fmt.Errorf("tensor rebuild: stride: %w", err)
	}
	if len(shape) != len(stride) {
		return nil, fmt.Errorf("tensor rebuild: size %v and stride %v differ in rank", shape, stride)
	}
	return &tensor{st: st, offset: offset, shape: shape, stride: stride}, nil
}

func intTuple(v any) ([]int, error) {
	t, ok := v.(*types.Tuple)
	if !ok {
		return nil, fmt.Errorf("%T, want a tuple", v)
	}
	out := make([]int, t.Len())
	for i := range out {
		n, ok := t.Get(i).(int)
		if !ok || n < 0 {
			return nil, fmt.Errorf("element %d is %v, want a non-negative int", i, t.Get(i))
		}
		out[i] = n
	}
	return out, nil
}

// opaque stands for any other Python global of the file (numpy scalars
// and dtypes among the training leftovers): it can be called, built and
// given attributes, and holds nothing Crucible reads.
type opaque struct{ module, name string }

func (o *opaque) Call(...any) (any, error)    { return &opaqueObject{class: o}, nil }
func (o *opaque) PyNew(...any) (any, error)   { return &opaqueObject{class: o}, nil }
func (o *opaque) PySetState(any) error        { return nil }
func (o *opaque) PyDictSet(key, _ any) error  { return nil }
func (o *opaque) PySetAttr(string, any) error { return nil }

type opaqueObject struct{ class *opaque }

func (o *opaqueObject) PySetState(any) error        { return nil }
func (o *opaqueObject) PyDictSet(key, _ any) error  { return nil }
func (o *opaqueObject) PySetAttr(string, any) error { return nil }

// legacyReader decodes one legacy PyTorch file held in memory.
type legacyReader struct {
	data     []byte
	pos      int
	storages map[string]*storage
}

// readLegacyTorch decodes a legacy PyTorch file and returns the saved
// object, its tensors holding their storages' bytes.
func readLegacyTorch(data []byte) (obj any, err error) {
	// gopickle is a decoder of untrusted input that was not written with
	// corrupt files in mind; a panic inside it is reported as a bad file.
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("%w: malformed pickle: %v", ErrCheckpoint, p)
		}
	}()
	r := &legacyReader{data: data, storages: make(map[string]*storage)}
	if len(data) >= 4 && string(data[:4]) == "PK\x03\x04" {
		return nil, fmt.Errorf("%w: a zip archive (the PyTorch ≥ 1.6 format); CGCNN's published checkpoints use the legacy format", ErrCheckpoint)
	}

	magic, err := r.unpickle("magic number", nil)
	if err != nil {
		return nil, fmt.Errorf("%w (want a legacy-format torch.save file, as CGCNN's .pth.tar checkpoints are)", err)
	}
	if n, ok := magic.(*big.Int); !ok || n.Text(16) != legacyMagic {
		return nil, fmt.Errorf("%w: magic number %v, want 0x%s (legacy PyTorch serialisation)", ErrCheckpoint, magic, legacyMagic)
	}
	proto, err := r.unpickle("protocol version", nil)
	if err != nil {
		return nil, err
	}
	if n, ok := proto.(int); !ok || n != legacyProtocol {
		return nil, fmt.Errorf("%w: PyTorch protocol version %v, want %d", ErrCheckpoint, proto, legacyProtocol)
	}
	sysInfo, err := r.unpickle("sys info", nil)
	if err != nil {
		return nil, err
	}
	if d, ok := sysInfo.(*types.Dict); ok {
		if le, ok := d.Get("little_endian"); ok && le != true {
			return nil, fmt.Errorf("%w: written on a big-endian machine, which is not supported", ErrCheckpoint)
		}
	}

	obj, err = r.unpickle("saved object", r.configure)
	if err != nil {
		return nil, err
	}
	rawKeys, err := r.unpickle("storage keys", nil)
	if err != nil {
		return nil, err
	}
	keys, ok := rawKeys.(*types.List)
	if !ok {
		return nil, fmt.Errorf("%w: storage keys are %T, want a list", ErrCheckpoint, rawKeys)
	}
	for i := 0; i < keys.Len(); i++ {
		key, ok := keys.Get(i).(string)
		if !ok {
			return nil, fmt.Errorf("%w: storage key %d is %T, want a string", ErrCheckpoint, i, keys.Get(i))
		}
		st, ok := r.storages[key]
		if !ok {
			return nil, fmt.Errorf("%w: storage key %q is not used by the saved object", ErrCheckpoint, key)
		}
		if err := r.readStorage(st); err != nil {
			return nil, err
		}
	}
	for key, st := range r.storages {
		if st.data == nil && st.size > 0 {
			return nil, fmt.Errorf("%w: storage %q has no data", ErrCheckpoint, key)
		}
	}
	return obj, nil
}

// unpickle decodes the pickle at the current position.
func (r *legacyReader) unpickle(what string, configure func(*pickle.Unpickler)) (any, error) {
	n, err := pickleLen(r.data[r.pos:])
	if err != nil {
		return nil, fmt.Errorf("%w: %s at byte %d: %w", ErrCheckpoint, what, r.pos, err)
	}
	u := pickle.NewUnpickler(bytes.NewReader(r.data[r.pos : r.pos+n]))
	if configure != nil {
		configure(&u)
	}
	v, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("%w: %s at byte %d: %w", ErrCheckpoint, what, r.pos, err)
	}
	r.pos += n
	return v, nil
}

// configure makes the unpickler rebuild tensors and storages.
func (r *legacyReader) configure(u *pickle.Unpickler) {
	u.FindClass = func(module, name string) (any, error) {
		switch {
		case module == "torch._utils" && name == "_rebuild_tensor":
			return rebuildTensor{}, nil
		case module == "torch._utils" && name == "_rebuild_tensor_v2":
			return rebuildTensor{v2: true}, nil
		case module == "torch":
			if t, ok := storageTypes[name]; ok {
				return t, nil
			}
		}
		return &opaque{module, name}, nil
	}
	u.PersistentLoad = r.persistentLoad
}

// persistentLoad resolves ('storage', type, key, location, size, view).
func (r *legacyReader) persistentLoad(id any) (any, error) {
	t, ok := id.(*types.Tuple)
	if !ok || t.Len() == 0 {
		return nil, fmt.Errorf("persistent id %v, want a tuple", id)
	}
	if kind, _ := t.Get(0).(string); kind != "storage" {
		return nil, fmt.Errorf("persistent id of kind %v, want \"storage\"", t.Get(0))
	}
	if t.Len() != 6 {
		return nil, fmt.Errorf("storage persistent id with %d fields, want 6", t.Len())
	}
	typ, ok := t.Get(1).(storageType)
	if !ok {
		return nil, fmt.Errorf("storage of type %v, want a torch storage class", t.Get(1))
	}
	key, ok := t.Get(2).(string)
	if !ok {
		return nil, fmt.Errorf("storage key %v, want a string", t.Get(2))
	}
	size, ok := t.Get(4).(int)
	if !ok || size < 0 || size > maxCheckpointBytes {
		return nil, fmt.Errorf("storage %q: size %v", key, t.Get(4))
	}
	if t.Get(5) != nil {
		return nil, fmt.Errorf("storage %q is a view of another storage, which CGCNN checkpoints do not use", key)
	}
	if st, ok := r.storages[key]; ok {
		if st.typ != typ || st.size != size {
			return nil, fmt.Errorf("storage %q declared twice with different types or sizes", key)
		}
		return st, nil
	}
	st := &storage{typ: typ, key: key, size: size}
	r.storages[key] = st
	return st, nil
}

// readStorage reads one storage's element count and data.
func (r *legacyReader) readStorage(st *storage) error {
	if len(r.data)-r.pos < 8 {
		return fmt.Errorf("%w: truncated before the data of storage %q", ErrCheckpoint, st.key)
	}
	count := binary.LittleEndian.Uint64(r.data[r.pos:])
	r.pos += 8
	if count != uint64(st.size) {
		return fmt.Errorf("%w: storage %q holds %d elements, the saved object declares %d", ErrCheckpoint, st.key, count, st.size)
	}
	n := st.size * st.typ.elemSize
	if len(r.data)-r.pos < n {
		return fmt.Errorf("%w: truncated in the data of storage %q (%d of %d bytes)", ErrCheckpoint, st.key, len(r.data)-r.pos, n)
	}
	st.data = r.data[r.pos : r.pos+n]
	r.pos += n
	return nil
}

// float64s returns the tensor's elements in row-major order as float64.
// Float and double storages are supported, as are the 16-bit formats
// (widened exactly).
func (t *tensor) float64s() ([]float64, error) {
	// Element count and highest element index addressed by the view,
	// checked against the storage before anything is allocated.
	n, last := 1, t.offset
	for d, s := range t.shape {
		if s == 0 {
			return []float64{}, nil
		}
		if s > t.st.size || t.stride[d] > t.st.size {
			return nil, fmt.Errorf("view of shape %v, stride %v does not fit its storage of %d elements", t.shape, t.stride, t.st.size)
		}
		n *= s
		last += (s - 1) * t.stride[d]
		if n > t.st.size || last >= t.st.size {
			return nil, fmt.Errorf("view of shape %v, stride %v, offset %d runs past its storage of %d elements", t.shape, t.stride, t.offset, t.st.size)
		}
	}
	out := make([]float64, n)
	var get func(i int) float64
	b := t.st.data
	switch t.st.typ.name {
	case "FloatStorage":
		get = func(i int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))) }
	case "DoubleStorage":
		get = func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])) }
	case "HalfStorage":
		get = func(i int) float64 { return halfToFloat64(binary.LittleEndian.Uint16(b[2*i:])) }
	case "BFloat16Storage":
		get = func(i int) float64 {
			return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		}
	default:
		return nil, fmt.Errorf("%s, want floating-point weights", t.st.typ.name)
	}
	idx := make([]int, len(t.shape))
	for k := range out {
		off := t.offset
		for d, i := range idx {
			off += i * t.stride[d]
		}
		out[k] = get(off)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

// halfToFloat64 widens an IEEE 754 binary16 value.
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// pickleLen returns the length of the pickle at the start of data, through
// its STOP opcode, checking that every opcode is known and every argument
// lies within data (pickle protocols 0–5, Lib/pickletools.py).
func pickleLen(data []byte) (int, error) {
	pos := 0
	need := func(n uint64) error {
		if n > uint64(len(data)-pos) {
			return fmt.Errorf("pickle truncated: opcode at byte %d needs %d more bytes, %d remain", pos, n, len(data)-pos)
		}
		return nil
	}
	line := func() error {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			return fmt.Errorf("pickle truncated: unterminated line at byte %d", pos)
		}
		pos += i + 1
		return nil
	}
	for pos < len(data) {
		op := data[pos]
		pos++
		var fixed int    // bytes of fixed-size argument
		var lenBytes int // bytes of a length prefix
		lines := 0
		switch op {
		case '.': // STOP
			return pos, nil
		case '(', '0', '1', '2', 'N', 'Q', 'R', 'a', 'b', 'd', '}', 'e', 'l', ']', 'o', 's', 't', ')', 'u',
			0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98:
		case 0x80, 'K', 'h', 'q', 'U', 'C', 0x8c, 0x8a, 0x82: // 1-byte argument or length
			switch op {
			case 'U', 'C', 0x8c, 0x8a:
				lenBytes = 1
			default:
				fixed = 1
			}
		case 'M', 0x83:
			fixed = 2
		case 'J', 'j', 'r', 0x84:
			fixed = 4
		case 'T', 'X', 'B', 0x8b:
			lenBytes = 4
		case 'G':
			fixed = 8
		case 0x8d, 0x8e, 0x96:
			lenBytes = 8
		case 0x95: // FRAME: its contents are ordinary opcodes
			fixed = 8
		case 'F', 'I', 'L', 'P', 'S', 'V', 'g', 'p':
			lines = 1
		case 'c', 'i':
			lines = 2
		default:
			return 0, fmt.Errorf("unknown pickle opcode 0x%02x at byte %d", op, pos-1)
		}
		if fixed > 0 {
			if err := need(uint64(fixed)); err != nil {
				return 0, err
			}
			pos += fixed
		}
		if lenBytes > 0 {
			if err := need(uint64(lenBytes)); err != nil {
				return 0, err
			}
			var n uint64
			switch lenBytes {
			case 1:
				n = uint64(data[pos])
			case 4:
				v := binary.LittleEndian.Uint32(data[pos:])
				if (op == 'T' || op == 0x8b) && int32(v) < 0 {
					return 0, fmt.Errorf("negative pickle length at byte %d", pos)
				}
				n = uint64(v)
			case 8:
				n = binary.LittleEndian.Uint64(data[pos:])
			}
			pos += lenBytes
			if err := need(n); err != nil {
				return 0, err
			}
			pos += int(n)
		}
		for ; lines > 0; lines-- {
			if err := line(); err != nil {
				return 0, err
			}
		}
	}
	return 0, fmt.Errorf("pickle truncated: no STOP opcode")
}

// readAllLimited reads r to its end, failing beyond limit bytes.
func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCheckpoint, limit)
	}
	return data, nil
}
