"""Exercise the C core through its extension (run by test_core_memory.py in a subprocess, under
AddressSanitizer/UBSan or valgrind): models of every block kind, loop closures, joint laws,
full evaluations, exact Jacobians and refusals (non-finite values, singular joints). Prints one
line per system with a checksum; ``--extension PATH`` loads that build of
``titopfmu.core._titop`` (e.g. a sanitized one) instead of the installed one."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import warnings

parser = argparse.ArgumentParser()
parser.add_argument("--extension", default=None)
parser.add_argument("--quick", action="store_true")
args = parser.parse_args()
if args.extension:
    spec = importlib.util.spec_from_file_location("titopfmu.core._titop", args.extension)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["titopfmu.core._titop"] = mod

import numpy as np  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 2)[0])  # tests/
from random_trees import random_state, random_tree  # noqa: E402
from test_loop_closure import four_bar  # noqa: E402
from test_native import ground_tree, imposed_motion_system, tethered_pendulum  # noqa: E402

from titopfmu import Engine  # noqa: E402
from titopfmu.examples.balloon import build_balloon  # noqa: E402

warnings.simplefilter("ignore")
systems = {
    "balloon": build_balloon,
    "tree": lambda: random_tree(3)[0],
    "multi_dof": lambda: random_tree(5, multi_dof=True)[0],
    "ground_tree": ground_tree,
    "four_bar": lambda: four_bar(1e4),
    "tether": tethered_pendulum,
    "imposed": imposed_motion_system,
}
rng = np.random.default_rng(0)
for name, build in systems.items():
    e = Engine(build())
    nt = e.native
    assert nt is not None, e.native_reason
    x = random_state(e, rng) if name in ("tree", "multi_dof") else e.initial_state()
    total = 0.0
    for k in range(2 if args.quick else 5):
        dx = e.derivative(0.1 * k, x)
        inputs = e._native_inputs(0.1 * k, x)
        full = np.full(nt.data_size, np.nan)  # a read before a write would come out NaN
        assert nt.derivative(0.1 * k, x, inputs, None, full, full=True) == 0
        acc = nt.body_values(full, "acc", 6)
        assert np.all(np.isfinite(acc)), name
        jx, jin = nt.jacobian(0.1 * k, x, inputs, np.full(nt.model.zwork_size, np.nan))
        assert np.all(np.isfinite(jx)) and np.all(np.isfinite(jin)), name
        total += float(np.sum(dx)) + float(np.sum(jx)) + float(np.sum(jin))
    bad = x.copy()
    bad[0] = np.nan
    r = nt.derivative(0.0, bad, e._native_inputs(0.0, x), np.empty(x.size), nt.new_data())
    assert r != 0 and r[0] == 2, r
    if nt.nin:
        inp = e._native_inputs(0.0, x).copy()
        inp[-1] = np.inf
        r = nt.derivative(0.0, x, inp, np.empty(x.size), nt.new_data())
        assert r != 0 and r[0] == 2, r
    print(f"{name} {total:.17g}")
print("done")
