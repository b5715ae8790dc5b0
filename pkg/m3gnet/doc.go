// Package m3gnet evaluates the M3GNet universal interatomic potential
// (Chen & Ong, "A universal graph deep learning interatomic potential for
// the periodic table", Nat. Comput. Sci. 2, 718 (2022)) as published by
// matgl (M3GNet-MP-2021.2.8-PES, the PyTorch refit trained on Materials
// Project relaxation trajectories), natively and in float64: Load reads
// state.pt and model.json as published, Model.Evaluate returns the total
// energy (eV, MP's uncorrected GGA/GGA+U scale), the forces (eV/Å) and the
// stress (GPa, ASE's sign convention) of a periodic cell or a molecule.
//
// The network, as matgl evaluates it:
//
//   - Graph: a bond from atom i to every periodic image of every atom j
//     within r_c = 5 Å, both directions. Bonds of length ≤ 4 Å (the
//     three-body cutoff) form triples (i; j, k), one for every ordered pair
//     of such bonds of atom i.
//   - Bases: g_ln(r) = sqrt(2/r_c³)/|j_{l+1}(z_ln)| · j_l(z_ln r/r_c), l, n < 3
//     (nine functions, z_ln the n-th root of the spherical Bessel function
//     j_l); per triple g_ln(r_ik) Y_l^0(θ_jik); the three-body cutoff
//     f_c(r) = 1 − 10x³ + 15x⁴ − 6x⁵, x = r/4 Å.
//   - Embedding: atoms by element (64 features); bonds silu(W g(r) + b).
//   - Three blocks, each: a three-body update of every bond ij,
//     e_ij += silu(W₁ ẽ) ⊙ σ(W₂ ẽ) with ẽ_ij = Σ_k g(r_ik)Y(θ) ⊙ σ(W x_k + b)
//     f_c(r_ij) f_c(r_ik); then the bond update
//     e_ij += φ_e(x_i, x_j, e_ij) ⊙ W_e g(r_ij) and the atom update
//     x_j += Σ_i φ_x(x_i, x_j, e_ij) ⊙ W_x g(r_ij), φ gated MLPs
//     (silu layers times sigmoid gates, 192 → 64 → 64 → 64).
//   - Readout: a gated MLP per atom (64 → 64 → 64 → 64 → 1), summed;
//     E = data_std · Σ + data_mean + Σ_atoms element_ref(Z).
//
// Forces and stress are the exact derivatives of that energy, computed by
// reverse-mode differentiation written out by hand (backward.go): the
// stress is (1/V) ∂E/∂ε for positions and cell strained together, in GPa
// (1 eV/Å³ = 160.21766208 GPa), as matgl's Potential returns it.
//
// matgl's three-body layer addresses bonds in two lists at once (see
// IndexMatgl); the default reproduces it, and with it the golden energies
// of matgl's tests; IndexPaper follows the paper's equations.
//
// A Model is immutable and safe for concurrent use; each goroutine
// evaluates with its own Workspace, whose buffers are reused so that
// repeated evaluations do not allocate. EvaluateAll spreads a batch over
// goroutines.
package m3gnet
