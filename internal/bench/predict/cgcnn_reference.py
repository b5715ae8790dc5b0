#!/usr/bin/env python3
"""Reference timing of CGCNN inference: CIF -> predictions of several checkpoints.

The Python/PyTorch side of "crucible bench predict". It does what the
original CGCNN code (Xie & Grossman, PRL 120, 145301 (2018)) does at
prediction time, written from the equations of the paper:

  * structure from the CIF with pymatgen (Structure.from_file);
  * atom features: the 92-dim vector of atom_init.json for each site;
  * for each site its max_num_nbr nearest neighbours within radius (pymatgen
    get_all_neighbors), sorted by distance; rows with fewer are padded with
    neighbour index 0 at distance radius + 1;
  * each distance expanded on Gaussians exp(-(d - mu_k)^2 / var^2),
    mu_k = dmin + k*step for mu_k <= dmax, var = step;
  * embedding Linear; n_conv convolutions
        z = BN1(W [v_i || v_j || u_ij] + b) = (filter, core)
        v_i <- softplus(v_i + BN2(sum_j sigmoid(filter) * softplus(core)))
    with batch norm in inference mode; mean pooling over the atoms of a
    crystal; softplus -> Linear -> softplus (-> (Linear -> softplus) x (n_h-1))
    -> Linear; log-softmax for a classifier; de-normalisation
    value * std + mean for a regressor.

The checkpoints are the published .pth.tar files, read with torch.load.
Inference runs single-threaded (torch.set_num_threads(1)) in float64 by
default (--float32 for the published precision). The outputs are checked
against the golden predictions, and the timing is printed as one JSON
object on stdout.

With --predict FILE..., it instead prints the predictions for the given CIF
files (how pkg/cgcnn/testdata/padded_reference.json was made).
"""

import argparse
import json
import os
import sys
import time

# Single-threaded before numpy/torch start their thread pools.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from pymatgen.core import Structure
except ImportError as e:  # exit status 3: the interpreter lacks a dependency
    sys.stderr.write("%s needs numpy, torch and pymatgen: %s\n" % (sys.executable, e))
    sys.exit(3)

BN_EPS = 1e-5


class Checkpoint:
    """Weights, normaliser and hyper-parameters of one CGCNN checkpoint."""

    def __init__(self, path, dtype):
        ckpt = torch.load(path, map_location="cpu")
        self.name = os.path.basename(path).removesuffix(".pth.tar")
        args = ckpt["args"]
        self.n_conv = int(args["n_conv"])
        self.n_h = int(args["n_h"])
        self.classification = args["task"] == "classification"
        self.w = {k: v.to(dtype) for k, v in ckpt["state_dict"].items()}
        self.mean = float(ckpt["normalizer"]["mean"])
        self.std = float(ckpt["normalizer"]["std"])

    def _bn(self, x, prefix):
        w = self.w
        return F.batch_norm(
            x,
            w[prefix + ".running_mean"],
            w[prefix + ".running_var"],
            w[prefix + ".weight"],
            w[prefix + ".bias"],
            training=False,
            eps=BN_EPS,
        )

    @torch.no_grad()
    def forward(self, atom_fea, nbr_fea, nbr_idx, crystal_of_atom, n_crystals):
        """Predictions for a batch of crystals (one value per crystal)."""
        w = self.w
        v = F.linear(atom_fea, w["embedding.weight"], w["embedding.bias"])
        n_atoms, m = nbr_idx.shape
        for layer in range(self.n_conv):
            p = "convs.%d." % layer
            fea_len = v.shape[1]
            pair = torch.cat(
                [v.unsqueeze(1).expand(n_atoms, m, fea_len), v[nbr_idx, :], nbr_fea],
                dim=2,
            )
            z = F.linear(pair, w[p + "fc_full.weight"], w[p + "fc_full.bias"])
            z = self._bn(z.view(-1, 2 * fea_len), p + "bn1").view(n_atoms, m, 2 * fea_len)
            filt, core = z.chunk(2, dim=2)
            summed = (torch.sigmoid(filt) * F.softplus(core)).sum(dim=1)
            v = F.softplus(v + self._bn(summed, p + "bn2"))
        # Mean over the atoms of each crystal.
        pooled = torch.zeros(n_crystals, v.shape[1], dtype=v.dtype).index_add_(0, crystal_of_atom, v)
        counts = torch.bincount(crystal_of_atom, minlength=n_crystals).to(v.dtype)
        h = pooled / counts.unsqueeze(1)
        h = F.softplus(F.linear(F.softplus(h), w["conv_to_fc.weight"], w["conv_to_fc.bias"]))
        for k in range(self.n_h - 1):
            h = F.softplus(F.linear(h, w["fcs.%d.weight" % k], w["fcs.%d.bias" % k]))
        out = F.linear(h, w["fc_out.weight"], w["fc_out.bias"])
        if self.classification:
            return torch.exp(F.log_softmax(out, dim=1))[:, 1]
        return out[:, 0] * self.std + self.mean


class Featurizer:
    """Atom features, neighbour indices and Gaussian-expanded distances."""

    def __init__(self, atom_init_path, radius=8.0, max_num_nbr=12, dmin=0.0, step=0.2):
        with open(atom_init_path) as f:
            table = json.load(f)
        self.atom_fea = {int(z): np.asarray(v, dtype=np.float64) for z, v in table.items()}
        self.radius = radius
        self.max_num_nbr = max_num_nbr
        self.centres = np.arange(dmin, radius + step, step)
        self.var = step

    def __call__(self, structure):
        fea = np.vstack([self.atom_fea[site.specie.Z] for site in structure])
        idx = np.zeros((len(structure), self.max_num_nbr), dtype=np.int64)
        dist = np.full((len(structure), self.max_num_nbr), self.radius + 1.0)
        for i, nbrs in enumerate(structure.get_all_neighbors(self.radius, include_index=True)):
            nbrs = sorted(nbrs, key=lambda n: n.nn_distance)[: self.max_num_nbr]
            idx[i, : len(nbrs)] = [n.index for n in nbrs]
            dist[i, : len(nbrs)] = [n.nn_distance for n in nbrs]
        gauss = np.exp(-((dist[..., np.newaxis] - self.centres) ** 2) / self.var**2)
        return fea, idx, gauss


def predict_file(path, featurizer, models, dtype):
    """CIF -> {checkpoint name: value}: one crystal, every model."""
    structure = Structure.from_file(path)
    fea, idx, gauss = featurizer(structure)
    atom_fea = torch.from_numpy(fea).to(dtype)
    nbr_fea = torch.from_numpy(gauss).to(dtype)
    nbr_idx = torch.from_numpy(idx)
    crystal_of_atom = torch.zeros(len(structure), dtype=torch.int64)
    return {
        m.name: float(m.forward(atom_fea, nbr_fea, nbr_idx, crystal_of_atom, 1)[0])
        for m in models
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="data folder (models/cgcnn, golden/cgcnn)")
    ap.add_argument(
        "--models",
        default="formation-energy-per-atom,band-gap,bulk-moduli,shear-moduli",
        help="comma-separated checkpoint names, or 'all'",
    )
    ap.add_argument("--predict", nargs="+", metavar="CIF", help="print the predictions for these files and exit")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes over the structures")
    ap.add_argument("--min-time", type=float, default=0, help="repeat passes for at least this many seconds")
    ap.add_argument("--float32", action="store_true", help="run in float32 as published")
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--ambiguous-tolerance", type=float, default=0.05)
    a = ap.parse_args()

    torch.set_num_threads(1)
    dtype = torch.float32 if a.float32 else torch.float64
    model_dir = os.path.join(a.data, "models", "cgcnn")
    golden_dir = os.path.join(a.data, "golden", "cgcnn")
    if a.models == "all":
        names = sorted(f.removesuffix(".pth.tar") for f in os.listdir(model_dir) if f.endswith(".pth.tar"))
    else:
        names = a.models.split(",")
    models = [Checkpoint(os.path.join(model_dir, n + ".pth.tar"), dtype) for n in names]
    featurizer = Featurizer(os.path.join(model_dir, "atom_init.json"))
    if a.predict:
        out = {os.path.basename(p): predict_file(p, featurizer, models, dtype) for p in a.predict}
        json.dump({"reference": "internal/bench/predict/cgcnn_reference.py (%s)" % ("float32" if a.float32 else "float64"),
                   "predictions": out}, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    with open(os.path.join(golden_dir, "predictions.json")) as f:
        golden = json.load(f)["structures"]
    names = sorted(golden)
    paths = [os.path.join(golden_dir, "cifs", n) for n in names]

    # Untimed pass: warm-up and sanity check against the golden values.
    key = "predictions_float32" if a.float32 else "predictions_float64"
    worst = {m.name: 0.0 for m in models}
    failures = []
    for name, path in zip(names, paths):
        got = predict_file(path, featurizer, models, dtype)
        g = golden[name]
        tol = a.ambiguous_tolerance if g["truncation_tie_ambiguous"] else a.tolerance
        for m, v in got.items():
            err = abs(v - g[key][m])
            if not g["truncation_tie_ambiguous"]:
                worst[m] = max(worst[m], err)
            if err > tol:
                failures.append("%s %s: got %.10g, golden %.10g" % (name, m, v, g[key][m]))

    start = time.perf_counter()
    cpu_start = time.process_time()
    passes = 0
    while passes < a.repeat or time.perf_counter() - start < a.min_time:
        for path in paths:
            predict_file(path, featurizer, models, dtype)
        passes += 1
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    n = passes * len(paths)
    json.dump(
        {
            "implementation": "pymatgen %s + torch %s (CPU, 1 thread, %s)"
            % (__import__("pymatgen.core").core.__version__, torch.__version__, "float32" if a.float32 else "float64"),
            "models": [m.name for m in models],
            "structures": n,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "structures_per_second": n / seconds,
            "max_abs_error": worst,
            "golden_ok": not failures,
            "failures": failures,
        },
        sys.stdout,
    )
    sys.stdout.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
