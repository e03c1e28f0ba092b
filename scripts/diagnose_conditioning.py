"""Is the loop solution's loss of accuracy with mass ratio due to the (1 - CC K) form? (issue 18)

Part 1, a light/heavy RigidBody root carrying a heavy/light WeldedBody child (one rigid body
in fact, see ``tests/stability_trees.py``), child/root mass ratio 1e-6 ... 1e6. Columns:

* ``err_comp``: relative error of the root acceleration (the derivative of its twist states,
  ``Engine.derivative``) against the same pair as ONE RigidBody (mass properties combined with
  numpy); ``err_pin``: against Pinocchio's ABA on the pair; ``err_sig``: the ``root.acc`` signal
  (the engine's object path) against the composite;
* ``cond(1-CC K)``: condition number of the matrix the former sweep (and the hybrid form of
  opaque maps) inverts at the root
  (CC = the root's compliance, K = the child's apparent inertia, both from the blocks'
  LoopMap objects of ``engine.evaluate(t, x).sol.maps``);
* ``cond(D_art)``: condition number of the assembled articulated inertia
  ``D_root - T K τ = D_root + τᵀ (Gᵀ D_child G) τ`` (SPD; it equals the composite's D_P);
* ``err_woodb`` / ``err_lu`` / ``err_chol``: the root acceleration recomputed in numpy from the
  SAME maps (the algebra alone, same inputs): ``ẋ'_C = (1 - CC K)^-1 (CC k + cC)`` in the
  former sweep's Woodbury form ``y + CC (1 - K CC)^-1 K y`` (woodb) or by an LU solve of (1 - CC K)
  (lu), then ``ẋ'_P = D^-1 (T W_C - h)`` with ``W_C = K ẋ'_C + k``; and by a Cholesky solve of
  ``D_art ẋ'_P = T k - h`` (chol).

Part 2: 10 trees of ``tests/random_trees.py`` and 10 of ``tests/stability_trees.py`` (masses
0.1-100 kg): relative error (∞-norm over [root acc, q̈], relative to max(1, ‖a_pin‖)) of the
engine's accelerations against Pinocchio's ABA, max over 5 random states each.

Run: ``PYTHONPATH=. python scripts/diagnose_conditioning.py``
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor, cho_solve

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from random_trees import random_state, random_tree  # noqa: E402
from stability_trees import (  # noqa: E402
    MASS_RATIOS,
    WeldedPairData,
    composite_body,
    stability_tree,
    welded_pair,
)

from titopfmu import Engine, InertiaWarning  # noqa: E402
from titopfmu.reference.pinocchio_model import to_pinocchio  # noqa: E402

T = 0.3  # evaluation time (the inputs are constant)


def rel(a: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def welded_row(ratio: float) -> tuple:
    d = WeldedPairData(ratio)
    pair, comp = welded_pair(d), composite_body(d)
    eng, eng_c = Engine(pair), Engine(comp)
    x = eng.initial_state()  # root states only (the welded body has none)
    a_comp = eng_c.derivative(T, eng_c.initial_state())[7:13]
    a = eng.derivative(T, x)[7:13]
    a_pin = to_pinocchio(pair).accelerations(x, T)[0:6]
    ev = eng.evaluate(T, x)
    a_sig = eng.signal(ev, "root.acc")
    root, tip = eng.tree_index["root"], eng.tree_index["tip"]
    mr, mt = ev.sol.maps[root], ev.sol.maps[tip]
    rb = pair.blocks["root"]
    K, k = mt.PP, mt.cP  # W_C = K ẋ'_C + k (a leaf: its own map)
    # the root's hybrid form (its joint-space map with α = ẋ'_P eliminated): ẋ'_C = CC W_C + cC,
    # ẋ'_P = XC W_C + xc
    Md, cd = mr.dense(False, 1)
    CC, cC, XC, xc = Md[0:6, 0:6], cd[0:6], Md[6:12, 0:6], cd[6:12]
    M = np.eye(6) - CC @ K
    D_art = rb.D - rb.T @ K @ rb.tau_stack
    # ẋ'_C = (1 - CC K)^-1 (CC k + cC), W_C = K ẋ'_C + k, ẋ'_P = XC W_C + xc = D^-1 (T W_C - h):
    # (i) with an LU solve of (1 - CC K); (ii) in the sweep's Woodbury form (dense CC: U = CC,
    # V = 1), (1 - CC K)^-1 y = y + CC (1 - K CC)^-1 K y
    y = CC @ k + cC
    a_lu = XC @ (K @ np.linalg.solve(M, y) + k) + xc
    acc_c = y + CC @ np.linalg.solve(np.eye(6) - K @ CC, K @ y)
    a_wood = XC @ (K @ acc_c + k) + xc
    # articulated form: (D - T K τ) ẋ'_P = T k - h, with -h = D xc (xc = ẋ'_P at W_C = 0)
    a_chol = cho_solve(cho_factor(0.5 * (D_art + D_art.T)), rb.T @ k + rb.D @ xc)
    D_comp = comp.blocks["root"].D
    return (
        ratio, np.linalg.norm(a_comp), rel(a, a_comp), rel(a, a_pin), rel(a_sig, a_comp),
        np.linalg.cond(M), np.linalg.cond(D_art), rel(D_art, D_comp),
        rel(a_wood, a_comp), rel(a_lu, a_comp), rel(a_chol, a_comp),
    )  # fmt: skip


def tree_error(system, n_states: int = 5, seed: int = 0) -> tuple[int, float]:
    engine = Engine(system)
    ref = to_pinocchio(system)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(n_states):
        x = random_state(engine, rng)
        t = float(rng.uniform(0, 5))
        dx = engine.derivative(t, x)
        parts = [dx[ref.state_slices[ref.root]][7:13]]
        parts += [dx[ref.state_slices[j]][1:2] for j in ref.joints]
        a = np.concatenate(parts)
        a_pin = ref.accelerations(x, t)
        worst = max(worst, float(np.max(np.abs(a - a_pin)) / max(1.0, np.linalg.norm(a_pin))))
    return len(ref.bodies), worst


def main() -> None:
    warnings.simplefilter("ignore", InertiaWarning)
    print("Welded pair (one rigid body): root acceleration, relative 2-norm errors")
    head = (f"{'m_c/m_r':>8} {'|a|':>6} {'err_comp':>9} {'err_pin':>9} {'err_sig':>9} "
            f"{'cond(1-CCK)':>11} {'cond(D_art)':>11} {'D_art-D_c':>9} "
            f"{'err_woodb':>9} {'err_lu':>9} {'err_chol':>9}")  # fmt: skip
    print(head)
    for ratio in MASS_RATIOS:
        r = welded_row(ratio)
        print(f"{r[0]:8.0e} {r[1]:6.2f} " + " ".join(f"{v:9.2e}" for v in r[2:5])
              + f" {r[5]:11.2e} {r[6]:11.2e} " + " ".join(f"{v:9.2e}" for v in r[7:]))  # fmt: skip
    print()
    print("Random trees vs Pinocchio ABA: max over 5 states of ‖a - a_pin‖∞ / max(1, ‖a_pin‖)")
    print(f"{'generator':>16} {'seed':>4} {'bodies':>6} {'rel. error':>10}")
    for name, make in (
        ("random_trees", lambda s: random_tree(s)[0]),
        ("stability_trees", lambda s: stability_tree(s)[0]),
    ):
        for seed in range(10):
            n, err = tree_error(make(seed), seed=seed)
            print(f"{name:>16} {seed:4d} {n:6d} {err:10.2e}")


if __name__ == "__main__":
    main()
