"""M3GNet (M3GNet-MP-2021.2.8-PES) in plain PyTorch, for the speed benchmark.

The same equations as pkg/m3gnet (see its package documentation), written
with torch tensors and autograd: the periodic bond graph within 5 A and the
three-body triples within 4 A built with numpy, the radial basis of
spherical Bessel functions, the three-body basis with Y_l^0, three blocks
of three-body and graph-convolution updates, the gated readout, and the
forces and stress as the gradient of the energy with respect to the
positions and a homogeneous strain. The three-body terms are addressed as
matgl addresses them (pkg/m3gnet's IndexMatgl), so that the golden
energies of matgl's tests are reproduced.

Reads state.pt and model.json as matgl publishes them. One thread
(torch.set_num_threads(1)). Usage:

  python3 m3gnet_torch.py --model DIR [--golden energies.json]
      [--structures FILE.json] [--min-time SECONDS] [--dtype float64|float32]

FILE.json is a list of {"name", "species": [symbols], "cell": 3x3 or null,
"pos": [[x, y, z], ...] (Cartesian, A)}. Prints one JSON object: the
golden check, each structure's energy (eV), forces (eV/A) and stress (GPa),
and the time of repeated passes over the structures (graph building and
network separately). Exit status 3 when torch is missing.
"""

import argparse
import itertools
import json
import math
import os
import sys
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # the harness reports this
    print(f"needs numpy and torch: {e}", file=sys.stderr)
    sys.exit(3)

EV_PER_A3_TO_GPA = 160.21766208
MAX_N = MAX_L = 3


def spherical_j(l, x):
    """Spherical Bessel function of the first kind j_l(x), numpy or torch."""
    lib = torch if isinstance(x, torch.Tensor) else np
    s, c = lib.sin(x), lib.cos(x)
    if l == 0:
        return s / x
    if l == 1:
        return s / x**2 - c / x
    if l == 2:
        return (3 / x**2 - 1) * s / x - 3 * c / x**2
    if l == 3:
        return (15 / x**3 - 6 / x) * s / x - (15 / x**2 - 1) * c / x
    raise ValueError(l)


def bessel_roots():
    """First MAX_N roots of j_l, l < MAX_L, by bisection between the roots of j_{l-1}."""
    prev = [(i + 1) * math.pi for i in range(MAX_N + MAX_L)]
    out = [prev[:MAX_N]]
    for l in range(1, MAX_L):
        cur = []
        for lo, hi in zip(prev, prev[1:]):
            flo = spherical_j(l, np.float64(lo))
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if mid in (lo, hi):
                    break
                fm = spherical_j(l, np.float64(mid))
                if (fm < 0) == (flo < 0):
                    lo, flo = mid, fm
                else:
                    hi = mid
            cur.append(0.5 * (lo + hi))
        out.append(cur[:MAX_N])
        prev = cur
    return out


class M3GNet:
    def __init__(self, model_dir, dtype):
        self.dtype = dtype
        with open(os.path.join(model_dir, "model.json")) as f:
            cfg = json.load(f)["kwargs"]["model"]["init_args"]
        sd = torch.load(os.path.join(model_dir, "state.pt"), map_location="cpu")
        self.w = {k: v.to(dtype) for k, v in sd.items()}
        self.row = {el: i for i, el in enumerate(cfg["element_types"])}
        self.rc = float(cfg["cutoff"])
        self.rc3 = float(cfg["threebody_cutoff"])
        roots = bessel_roots()
        norm = math.sqrt(2 / self.rc**3)
        self.scale = torch.tensor([roots[l][n] / self.rc for l in range(MAX_L) for n in range(MAX_N)], dtype=dtype)
        self.coef = torch.tensor(
            [norm / abs(float(spherical_j(l + 1, np.float64(roots[l][n])))) for l in range(MAX_L) for n in range(MAX_N)],
            dtype=dtype)
        self.order = torch.tensor([l for l in range(MAX_L) for n in range(MAX_N)])

    # -- graph -------------------------------------------------------------

    def graph(self, species, cell, pos):
        """Bonds (src, dst, image shift) and matgl-addressed triples."""
        n = len(species)
        pos = np.asarray(pos, dtype=np.float64)
        if cell is not None:
            cell = np.asarray(cell, dtype=np.float64)
            inv = np.linalg.inv(cell)
            # Images needed: the cutoff over each plane spacing.
            spacing = 1 / np.linalg.norm(inv, axis=0)
            reach = np.ceil(self.rc / spacing).astype(int) + 1
            images = np.array(list(itertools.product(*[range(-r, r + 1) for r in reach])), dtype=np.float64)
            shifts = images @ cell  # (m, 3)
            d = pos[None, :, None, :] + shifts[None, None, :, :] - pos[:, None, None, :]  # (i, j, img, 3)
            dist = np.linalg.norm(d, axis=-1)
            i, j, k = np.nonzero(dist <= self.rc)
            self_pair = (i == j) & np.all(images[k] == 0, axis=1)
            i, j, k = i[~self_pair], j[~self_pair], k[~self_pair]
            img = images[k]
            # Each atom's bonds by neighbour index, then image.
            order = np.lexsort((img[:, 2], img[:, 1], img[:, 0], j, i))
            src, dst, shift = i[order], j[order], shifts[k[order]]
        else:
            d = pos[None, :, :] - pos[:, None, :]
            dist = np.linalg.norm(d, axis=-1)
            i, j = np.nonzero((dist <= self.rc) & ~np.eye(n, dtype=bool))
            src, dst, shift = i, j, np.zeros((len(i), 3))
        vec = pos[dst] + shift - pos[src]
        blen = np.linalg.norm(vec, axis=1)
        kept = np.nonzero(blen <= self.rc3)[0]
        ks = src[kept]
        _, start, size = np.unique(ks, return_index=True, return_counts=True)
        gsize = np.repeat(size, size)  # group size of each kept bond
        glo = np.repeat(start, size)  # first kept position of its group
        K = len(kept)
        a = np.repeat(np.arange(K), gsize)
        within = np.arange(len(a)) - np.repeat(np.cumsum(gsize) - gsize, gsize)
        b = glo[a] + within
        keep = a != b
        a, b = a[keep], b[keep]
        nt = len(a)
        # matgl's addressing: the kept positions a, b index the full bond
        # list for the cutoff weights and the end atom; the target bond is
        # the segment id of the running totals of triples per kept bond.
        cnt = gsize - 1
        big = np.nonzero(size > 1)[0]
        max_id = (start[big[-1]] + size[big[-1]] - 1) if len(big) else -1
        mark = np.zeros(nt + 1, dtype=np.int64)
        if max_id > 0:
            cum = np.cumsum(cnt)[:max_id]
            mark[cum[cum < nt]] = 1
        tgt = np.cumsum(mark[:nt]) if nt else np.zeros(0, dtype=np.int64)
        return dict(src=src, dst=dst, shift=shift, ja=kept[a], jb=kept[b], c1=a, c2=b, end=dst[b], tgt=tgt)

    # -- network -----------------------------------------------------------

    def linear(self, name, x, bias=True):
        y = x @ self.w[name + ".weight"].T
        return y + self.w[name + ".bias"] if bias else y

    def gated(self, name, x, nlayers, bias, activate_last):
        silu = torch.nn.functional.silu
        h, g = x, x
        for k in range(nlayers):
            h = self.linear(f"{name}.layers.{2 * k}", h, bias)
            g = self.linear(f"{name}.gates.{2 * k}", g, bias)
            if k < nlayers - 1:
                h, g = silu(h), silu(g)
        if activate_last:
            h = silu(h)
        return h * torch.sigmoid(g)

    def rbf(self, r):
        r = torch.clamp(r, max=self.rc)
        x = self.scale * r[:, None]
        cols = [spherical_j(int(l), x[:, k]) for k, l in enumerate(self.order)]
        return torch.stack(cols, dim=1) * self.coef

    def cutoff3(self, r):
        x = r / self.rc3
        f = 1 - 10 * x**3 + 15 * x**4 - 6 * x**5
        return torch.where(r <= self.rc3, f, torch.zeros_like(f))

    def energy_forces_stress(self, species, cell, pos, g):
        dt, silu = self.dtype, torch.nn.functional.silu
        w = self.w
        pos = torch.tensor(np.asarray(pos), dtype=dt, requires_grad=True)
        strain = torch.zeros((3, 3), dtype=dt, requires_grad=True)
        deform = torch.eye(3, dtype=dt) + strain
        p = pos @ deform
        src, dst = torch.from_numpy(g["src"]), torch.from_numpy(g["dst"])
        shift = torch.tensor(g["shift"], dtype=dt) @ deform
        vec = p[dst] + shift - p[src]
        r = torch.linalg.norm(vec, dim=1)
        rbf = self.rbf(r)
        fc = self.cutoff3(r)
        ja, jb = torch.from_numpy(g["ja"]), torch.from_numpy(g["jb"])
        c1, c2 = torch.from_numpy(g["c1"]), torch.from_numpy(g["c2"])
        end, tgt = torch.from_numpy(g["end"]), torch.from_numpy(g["tgt"])
        cos = (vec[ja] * vec[jb]).sum(1) / (r[ja] * r[jb])
        cos = torch.clamp(cos, -1 + 1e-7, 1 - 1e-7)
        y = torch.stack([
            torch.full_like(cos, 0.5 / math.sqrt(math.pi)),
            math.sqrt(3 / (4 * math.pi)) * cos,
            math.sqrt(5 / (16 * math.pi)) * (3 * cos**2 - 1)], dim=1)
        basis = rbf[jb] * y[:, self.order]
        weight = (fc[c1] * fc[c2])[:, None]

        rows = torch.tensor([self.row[s] for s in species])
        x = w["model.embedding.layer_node_embedding.weight"][rows]
        e = silu(self.linear("model.embedding.layer_edge_embedding.layers.0", rbf))
        nb = len(g["src"])
        for b in range(3):
            t = f"model.three_body_interactions.{b}"
            atom = torch.sigmoid(self.linear(t + ".update_network_atom.layers.0", x))
            n3 = torch.zeros((nb, MAX_N * MAX_L), dtype=dt).index_add(0, tgt, basis * atom[end] * weight)
            e = e + self.gated(t + ".update_network_bond", n3, 1, False, True)
            c = f"model.graph_layers.{b}.conv"
            v = self.gated(c + ".edge_update_func", torch.cat([x[src], x[dst], e], 1), 3, True, True)
            e = e + v * self.linear(c + ".edge_weight_func", rbf, False)
            u = self.gated(c + ".node_update_func", torch.cat([x[src], x[dst], e], 1), 3, True, True)
            x = x.index_add(0, dst, u * self.linear(c + ".node_weight_func", rbf, False))
        out = self.gated("model.final_layer.gated", x, 4, True, False)
        energy = (w["data_std"] * out.sum() + w["data_mean"] + w["element_refs.property_offset"][rows].sum())
        gpos, gstrain = torch.autograd.grad(energy, [pos, strain])
        forces = -gpos
        stress = torch.zeros((3, 3), dtype=dt)
        if cell is not None:
            vol = abs(float(np.linalg.det(np.asarray(cell))))
            stress = gstrain / vol * EV_PER_A3_TO_GPA
        return float(energy), forces.detach().numpy(), stress.detach().numpy()

    def evaluate(self, s):
        g = self.graph(s["species"], s.get("cell"), s["pos"])
        return self.energy_forces_stress(s["species"], s.get("cell"), s["pos"], g)


def golden_check(model, path):
    with open(path) as f:
        cases = json.load(f)["cases"]
    out = []
    for c in cases:
        if c["periodic"]:
            cell = np.array(c["lattice"], dtype=np.float64)
            pos = np.array(c["frac_coords"], dtype=np.float64) @ cell
        else:
            cell, pos = None, np.array(c["cart_coords"], dtype=np.float64)
        e, _, _ = model.evaluate({"species": c["species"], "cell": cell, "pos": pos})
        out.append({"name": c["name"], "energy": e, "want": c["energy_eV"], "tolerance": c["tolerance_eV"],
                    "ok": abs(e - c["energy_eV"]) <= c["tolerance_eV"]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--golden")
    ap.add_argument("--structures")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    dtype = getattr(torch, args.dtype)
    model = M3GNet(args.model, dtype)
    res = {"implementation": f"plain PyTorch {torch.__version__} ({args.dtype}, 1 thread), numpy {np.__version__} graph",
           "dtype": args.dtype}
    if args.golden:
        res["golden"] = golden_check(model, args.golden)
    if args.structures:
        with open(args.structures) as f:
            sts = json.load(f)
        results = []
        for s in sts:  # also warms up
            e, fo, st = model.evaluate(s)
            results.append({"name": s["name"], "energy": e, "forces": fo.tolist(), "stress": st.tolist()})
        res["results"] = results
        passes, graph_s, total_s = 0, 0.0, 0.0
        cpu0 = time.process_time()
        while passes == 0 or total_s < args.min_time:
            for s in sts:
                t0 = time.perf_counter()
                g = model.graph(s["species"], s.get("cell"), s["pos"])
                t1 = time.perf_counter()
                model.energy_forces_stress(s["species"], s.get("cell"), s["pos"], g)
                t2 = time.perf_counter()
                graph_s += t1 - t0
                total_s += t2 - t0
            passes += 1
        res.update(passes=passes, structures=passes * len(sts), seconds=total_s, graph_seconds=graph_s,
                   cpu_seconds=time.process_time() - cpu0)
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
