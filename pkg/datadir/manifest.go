package datadir

import (
	"slices"
	"strings"
)

// File is one file of a data directory: where it goes, where it comes from
// and its SHA-256 sum.
type File struct {
	// Path is relative to the data directory, slash-separated.
	Path string
	// Size in bytes and SHA256, the hex sum, are those of the content.
	Size   int64
	SHA256 string
	// Parts are the public URLs of the content. A file with several parts
	// is a CSV assembled from them: the first whole, the following without
	// their header line.
	Parts []string
	// Required marks the files the oracle and its relax tier load; the
	// others (an extra checkpoint, tables only some commands read) are
	// fetched too but may be absent.
	Required bool
	// Derived, set for a file without a byte-exact public copy, says how it
	// was made from its public source (columns selected, a spreadsheet
	// converted). Such a file comes only from a mirror of a data directory.
	Derived string
}

// GitHubRaw is the host of every public source; PullOptions.BaseURL
// replaces it.
const GitHubRaw = "https://raw.githubusercontent.com"

// Public sources (see data/README.md and models/cgcnn/README.md of the data
// directory): the Matbench and benchmark tables as CrabNet redistributes
// them (anthony-wang/CrabNet, MIT licence; Materials Project data, CC BY
// 4.0), LLEMA's task list (scientific-discovery/LLEMA, MIT) and the CGCNN
// checkpoints (txie-93/cgcnn, MIT).
const (
	crabnet  = GitHubRaw + "/anthony-wang/CrabNet/master/data/"
	cgcnn    = GitHubRaw + "/txie-93/cgcnn/master/"
	llema    = GitHubRaw + "/scientific-discovery/LLEMA/main/src/"
	pymatgen = GitHubRaw + "/materialsproject/pymatgen/v2022.11.7/pymatgen/entries/"
	mbd      = GitHubRaw + "/janosh/matbench-discovery/2c7f9fc4/data/mp/"
	matgl    = GitHubRaw + "/materialsvirtuallab/matgl/e9cde2291acd0b4c4a342428e7dd5e4d596b7bf9/pretrained_models/M3GNet-MP-2021.2.8-PES/"
	matminer = "hackingmaterials/matminer@c24f193 matminer/datasets/"
)

// splits are the parts of a CrabNet benchmark table.
func splits(name string) []string {
	base := crabnet + "benchmark_data/" + name + "/"
	return []string{base + "train.csv", base + "val.csv", base + "test.csv"}
}

// manifest lists every file of a data directory. The sums are those of the
// files as published (and, for the assembled tables, as assembled); a
// change upstream shows as a checksum mismatch, never as silently
// different data.
var manifest = []File{
	{Path: "data/mp_e_form.csv", Size: 4022461, SHA256: "90e895635c96447c5be4e9070d26f26e1b4d17925102a6597ae3c4d79c32555b",
		Parts: []string{crabnet + "matbench/mp_e_form.csv"}, Required: true},
	{Path: "data/mp_gap.csv", Size: 2147391, SHA256: "4084e584467e6f81ec8bf12c438eeb2c049ae39e11401bae694ef6a9983b9d9f",
		Parts: []string{crabnet + "matbench/mp_gap.csv"}, Required: true},
	{Path: "data/mp_e_hull.csv", Size: 1250824, SHA256: "d23ca2ae63953abdeef89de6f4e90b1a38084fd24251e6a6c737eb221db37234",
		Parts: splits("mp_e_hull"), Required: true},
	{Path: "data/mp_bulk_modulus.csv", Size: 145079, SHA256: "721f6b20c8169ade56b6f40ef511f94232b5b15fe8f1d19dbb1c1feb06a34321",
		Parts: splits("mp_bulk_modulus"), Required: true},
	{Path: "data/mp_shear_modulus.csv", Size: 141400, SHA256: "e728a5c8455246f21ca54db3accb20cbcf5cf53ae8549dca8b85e7a4621b5f11",
		Parts: splits("mp_shear_modulus"), Required: true},
	{Path: "data/mp_log10_bulk_modulus_vrh.csv", Size: 296929, SHA256: "b4e2620ca797b9eca83a6633d4b94dc3ae047bba3f0eacd5cdb446a75d07d087",
		Parts: []string{crabnet + "matbench/elasticity_log10(K_VRH).csv"}, Required: true},
	{Path: "data/mp_log10_shear_modulus_vrh.csv", Size: 296676, SHA256: "6eda504f98a3b98308bb4f1353810f2703475daa85540b15aebe1fedf313304a",
		Parts: []string{crabnet + "matbench/elasticity_log10(G_VRH).csv"}, Required: true},
	{Path: "data/dielectric.csv", Size: 132927, SHA256: "6320d3da4c0f68e9248e26c058bf047b71f43ec687a6db6faf4f7bc4f4f21c9e",
		Parts: []string{crabnet + "matbench/dielectric.csv"}, Required: true},
	{Path: "data/expt_gap.csv", Size: 57522, SHA256: "3de82c37f1db3ab9bbd92366c96633f131913ded5db0969eb36216bdd11cef2f",
		Parts: []string{crabnet + "matbench/expt_gap.csv"}},
	{Path: "data/llema_tasks.csv", Size: 2594, SHA256: "ede3b32dd8f18c707d5d30a747ee0f4492b8e293bf2a22fdfc965b0b05d4bbc4",
		Parts: []string{llema + "all_tasks.csv"}},
	{Path: "data/mp_elemental_reference_entries.json.gz", Size: 6350, SHA256: "9fd6ef848a91c88840a0d1709b5856d0edb4af22095237e59db52f2acd6bbf79",
		Parts: []string{mbd + "2023-02-07-mp-elemental-reference-entries.json.gz"}, Required: true},
	{Path: "data/MP2020Compatibility.yaml", Size: 1555, SHA256: "90a5af2132c8eb85be1da4d89c2a78b58e045528bcba1189fa5ec356fb8e6d9a",
		Parts: []string{pymatgen + "MP2020Compatibility.yaml"}, Required: true},
	{Path: "data/MPCompatibility.yaml", Size: 2206, SHA256: "76c87cc94820b3fc008ecf6c711e86e54f2157806b4548e7193db8c081df61eb",
		Parts: []string{pymatgen + "MPCompatibility.yaml"}, Required: true},
	{Path: "data/mp_dielectric_petousis2017.csv", Size: 2112384, SHA256: "2eb7f7c7d18460bcf2abd2a5a237d3f62105df13b2e5972a6dc49d471f69219b",
		Derived: "columns of " + matminer + "dielectric_constant.csv, selected and renamed"},
	{Path: "data/mp_piezo_dejong2015.csv", Size: 1129841, SHA256: "b7386ab80aef2a78d3914f3798756c3440f75b76d8ec22a6a0f4a5219f71ca50",
		Derived: "columns of " + matminer + "piezo.csv, selected and renamed"},
	{Path: "data/expt_thermoelectric_estm.csv", Size: 662319, SHA256: "94ea883cf47b9ea4cda557d75434dd2389858b25cdb5bc3e6b746487ff23d256",
		Derived: "first sheet of KRICT-DATA/SIMD@72d597c dataset/estm.xlsx as CSV"},

	{Path: "models/cgcnn/atom_init.json", Size: 28392, SHA256: "cb90bd2257dbf8cfc4e6b2b6d4348d4616e8e9680f1339b1461137032e0f1894",
		Parts: []string{cgcnn + "data/sample-regression/atom_init.json"}, Required: true},
	{Path: "models/cgcnn/formation-energy-per-atom.pth.tar", Size: 791195, SHA256: "e2f8bb910744f2c2f21d968285b6fd4316d795d0f3e7465ed0e3b4f3c92651a1",
		Parts: []string{cgcnn + "pre-trained/formation-energy-per-atom.pth.tar"}, Required: true},
	{Path: "models/cgcnn/band-gap.pth.tar", Size: 791173, SHA256: "d269775b9be0995c046abed3dd6556c281a3eff7b2e1d73cf81b99e2a1d4aa6c",
		Parts: []string{cgcnn + "pre-trained/band-gap.pth.tar"}, Required: true},
	{Path: "models/cgcnn/bulk-moduli.pth.tar", Size: 791176, SHA256: "0a3f66b9a0ee6acef11bb852717424a6c3560073239c17bdbea568cc43816dd3",
		Parts: []string{cgcnn + "pre-trained/bulk-moduli.pth.tar"}, Required: true},
	{Path: "models/cgcnn/shear-moduli.pth.tar", Size: 791176, SHA256: "34173bc59a0a8f9f74021155b304b74d9e709b1ff241d3f02e83031c9deb216c",
		Parts: []string{cgcnn + "pre-trained/shear-moduli.pth.tar"}, Required: true},
	{Path: "models/cgcnn/poisson-ratio.pth.tar", Size: 791177, SHA256: "8d152338550b49ff6c3790cccdb892ee8bafe513bc49ab21955cdf7807e89513",
		Parts: []string{cgcnn + "pre-trained/poisson-ratio.pth.tar"}, Required: true},
	{Path: "models/cgcnn/efermi.pth.tar", Size: 791176, SHA256: "5ed4ba15b5bd3e04ce6b0eca75f15bb6465557aada4097f11291ea1e7cd48afb",
		Parts: []string{cgcnn + "pre-trained/efermi.pth.tar"}, Required: true},
	{Path: "models/cgcnn/semi-metal-classification.pth.tar", Size: 791628, SHA256: "3791d48885afafb28c0797e22637b63ea591cf7fb27497ce537911261b92edc8",
		Parts: []string{cgcnn + "pre-trained/semi-metal-classification.pth.tar"}, Required: true},
	{Path: "models/cgcnn/final-energy-per-atom.pth.tar", Size: 791191, SHA256: "1afe9260a0b7bd01d2a0a752fbac12be5badea6a56e57aeea5877ae8f9a32c57",
		Parts: []string{cgcnn + "pre-trained/final-energy-per-atom.pth.tar"}},

	{Path: "models/m3gnet/M3GNet-MP-2021.2.8-PES/model.json", Size: 5211, SHA256: "05e7db8676ceb37eb07848aff49c556b188699e1035f3df0cbbf1a2c4959148f",
		Parts: []string{matgl + "model.json"}, Required: true},
	{Path: "models/m3gnet/M3GNet-MP-2021.2.8-PES/state.pt", Size: 1228529, SHA256: "a9aa723705bd1a242ec8749332f137811c4a94e17995a564f8f94a9aca68061b",
		Parts: []string{matgl + "state.pt"}, Required: true},
}

// Files returns every file of a data directory, tables first.
func Files() []File {
	out := make([]File, len(manifest))
	for i, f := range manifest {
		f.Parts = slices.Clone(f.Parts)
		out[i] = f
	}
	return out
}

// Lookup returns the file with the given path.
func Lookup(path string) (File, bool) {
	for _, f := range manifest {
		if f.Path == path {
			f.Parts = slices.Clone(f.Parts)
			return f, true
		}
	}
	return File{}, false
}

// sources returns the URLs to fetch f from: its parts with GitHubRaw
// replaced by base when base is set, or, with a mirror, the file's path
// under the mirror (a data directory served over HTTP, one part).
func (f File) sources(base, mirror string) []string {
	if mirror != "" {
		return []string{strings.TrimSuffix(mirror, "/") + "/" + f.Path}
	}
	if base == "" {
		return f.Parts
	}
	out := make([]string, len(f.Parts))
	for i, u := range f.Parts {
		out[i] = strings.TrimSuffix(base, "/") + strings.TrimPrefix(u, GitHubRaw)
	}
	return out
}
