#!/usr/bin/env python3
"""Reference plug-in model server for Crucible (pkg/modelserver's contract).

It answers NATS requests on one subject with the electronic dielectric
constant eps_inf = n^2 of each structure, predicted by k-nearest neighbours
(k = 5, inverse-distance weights) on atomic-fraction vectors over a table
of refractive indices (by default the data directory's dielectric.csv,
Matbench's matbench_dielectric: formula, n). It is a simple, real method,
not a good model: it stands where a GPU model (ALIGNN, MACE, an in-house
one) would, and shows the contract -- structures in as pymatgen
dictionaries, values and uncertainties out, per-structure errors with a
reason. Replace predict() with your model.

Standard library only (a minimal NATS client is included), so it runs
wherever Python 3.8+ does:

    python3 server.py --nats nats://127.0.0.1:4222 --subject crucible.model.eps_inf \
        --table $CRUCIBLE_DATA/data/dielectric.csv
"""

import argparse
import csv
import json
import math
import random
import re
import socket
import sys

VERSION = 1
K = 5


# --- the model -------------------------------------------------------------

FORMULA_TOKEN = re.compile(r"([A-Z][a-z]?)(\d*\.?\d*)")


def parse_formula(formula):
    """Atomic fractions of a formula such as K12O16V4 (no parentheses)."""
    amounts = {}
    pos = 0
    for m in FORMULA_TOKEN.finditer(formula):
        if m.start() != pos:
            raise ValueError("cannot read formula %r" % formula)
        pos = m.end()
        amounts[m.group(1)] = amounts.get(m.group(1), 0.0) + float(m.group(2) or 1)
    if pos != len(formula) or not amounts:
        raise ValueError("cannot read formula %r" % formula)
    total = sum(amounts.values())
    return {el: a / total for el, a in amounts.items()}


def distance(a, b):
    return math.sqrt(sum((a.get(e, 0.0) - b.get(e, 0.0)) ** 2 for e in set(a) | set(b)))


class KNN:
    def __init__(self, table):
        self.rows = []
        with open(table, newline="") as f:
            for row in csv.DictReader(f):
                n = float(row["target"])
                self.rows.append((parse_formula(row["formula"]), n * n))
        self.elements = set(e for comp, _ in self.rows for e in comp)
        # Calibrate the uncertainty: the 68 % quantile of the absolute
        # leave-one-out error on 300 rows drawn with a fixed seed.
        rng = random.Random(1)
        errs = sorted(abs(self.predict_comp(c, skip=i)[0] - y)
                      for i, (c, y) in ((i, self.rows[i]) for i in rng.sample(range(len(self.rows)), 300)))
        self.q68 = errs[int(0.68 * len(errs))]

    def predict_comp(self, comp, skip=-1):
        near = sorted((distance(comp, c), y) for i, (c, y) in enumerate(self.rows) if i != skip)[:K]
        w = [1.0 / (d + 1e-3) for d, _ in near]
        return sum(wi * y for wi, (_, y) in zip(w, near)) / sum(w), near[0][0]

    def predict(self, structure):
        """(value, uncertainty) for a pymatgen Structure dictionary, or raise
        PluginError with a reason."""
        try:
            amounts = {}
            for site in structure["sites"]:
                for sp in site["species"]:
                    el = re.sub(r"[^A-Za-z]", "", sp["element"])
                    amounts[el] = amounts.get(el, 0.0) + float(sp.get("occu", 1))
        except (KeyError, TypeError, ValueError) as e:
            raise PluginError("bad_structure", "not a pymatgen Structure dictionary: %s" % e)
        missing = sorted(set(amounts) - self.elements)
        if missing:
            raise PluginError("unsupported_element", "no training compound contains " + ", ".join(missing))
        total = sum(amounts.values())
        value, _ = self.predict_comp({e: a / total for e, a in amounts.items()})
        return value, self.q68


class PluginError(Exception):
    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def answer(model, prop, data):
    """The reply (a dict) to one request's bytes."""
    try:
        req = json.loads(data)
        if req.get("version") != VERSION:
            raise PluginError("bad_request", "version %r, this server speaks %d" % (req.get("version"), VERSION))
        if req.get("property") != prop:
            raise PluginError("bad_request", "property %r, this server predicts %s" % (req.get("property"), prop))
        items = req["structures"]
    except PluginError as e:
        return {"version": VERSION, "error": {"reason": e.reason, "detail": e.detail}}
    except (ValueError, KeyError, TypeError) as e:
        return {"version": VERSION, "error": {"reason": "bad_request", "detail": str(e)}}
    results = []
    for item in items:
        try:
            value, unc = model.predict(item["structure"])
            results.append({"id": item["id"], "value": value, "uncertainty": unc})
        except PluginError as e:
            results.append({"id": item.get("id"), "error": {"reason": e.reason, "detail": e.detail}})
        except Exception as e:  # the model's own failure, per structure
            results.append({"id": item.get("id"), "error": {"reason": "model_error", "detail": repr(e)}})
    return {"version": VERSION, "results": results}


# --- a minimal NATS client (the text protocol: INFO, CONNECT, SUB, MSG, PUB, PING) --

class NATS:
    def __init__(self, url):
        m = re.match(r"nats://(?:([^:@]*)(?::([^@]*))?@)?([^:/]+):(\d+)", url)
        if not m:
            raise ValueError("NATS URL %r: want nats://[user:pass@]host:port" % url)
        user, password, host, port = m.groups()
        self.sock = socket.create_connection((host, int(port)))
        self.buf = b""
        line = self.readline()
        if not line.startswith(b"INFO"):
            raise IOError("not a NATS server: %r" % line[:80])
        opts = {"verbose": False, "pedantic": False, "name": "crucible-example-plugin", "lang": "python", "version": "1"}
        if user:
            opts.update(user=user, **({"pass": password} if password else {}))
        self.send(b"CONNECT " + json.dumps(opts).encode() + b"\r\nPING\r\n")

    def send(self, data):
        self.sock.sendall(data)

    def readline(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise IOError("NATS connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def readn(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise IOError("NATS connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def serve(self, subject, handle):
        # A queue group, so several replicas of the server share the load.
        self.send(("SUB %s crucible-plugins 1\r\n" % subject).encode())
        while True:
            line = self.readline()
            if line.startswith(b"PING"):
                self.send(b"PONG\r\n")
            elif line.startswith(b"MSG"):
                parts = line.split()
                reply = parts[3].decode() if len(parts) == 5 else None
                data = self.readn(int(parts[-1]))
                if reply:
                    out = json.dumps(handle(data)).encode()
                    self.send(("PUB %s %d\r\n" % (reply, len(out))).encode() + out + b"\r\n")
            elif line.startswith(b"-ERR"):
                raise IOError(line.decode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nats", default="nats://127.0.0.1:4222")
    ap.add_argument("--subject", default="crucible.model.eps_inf")
    ap.add_argument("--property", default="dielectric_electronic")
    ap.add_argument("--table", required=True, help="CSV with formula,target (target: refractive index n)")
    args = ap.parse_args()
    model = KNN(args.table)
    print("kNN on %d compounds, leave-one-out 68 %% error %.3f; answering %s on %s"
          % (len(model.rows), model.q68, args.subject, args.nats), file=sys.stderr, flush=True)
    NATS(args.nats).serve(args.subject, lambda data: answer(model, args.property, data))


if __name__ == "__main__":
    main()
