"""Numerical stability of the loop solution at any mass ratio (issue 18).

Public API only (``System``, ``Engine``, ``Engine.derivative``, ``Engine.evaluate`` /
``Engine.signal``, ``to_pinocchio``), so that the tests run unchanged on any numerical core.
References are independent of the engine's loop solution: the same welded pair as ONE rigid
body (mass properties combined with numpy, no loop), and Pinocchio's ABA.

a. welded pair (one rigid body in fact) at child/root mass ratios 1e-6 ... 1e6: root
   acceleration = composite body = Pinocchio to 1e-12 relative;
b. 30 random trees (2-15 bodies, masses 0.1-100 kg): accelerations = Pinocchio's ABA to 1e-12;
c. the same 30 trees integrated 2 s with DOP853 at rtol 1e-11: titopfmu needs at most 1.3 times
   Pinocchio's right-hand-side evaluations;
d. the same trees without gravity, efforts and wrenches: total momentum drifts no more than
   Pinocchio's with the same integrator.

The systems are built in ``stability_trees.py``; ``scripts/diagnose_conditioning.py`` prints the
numbers behind them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from random_trees import random_state  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from stability_trees import (  # noqa: E402
    MASS_RATIOS,
    WeldedPairData,
    composite_body,
    stability_tree,
    welded_pair,
)

from titopfmu import Engine, InertiaWarning  # noqa: E402
from titopfmu.reference.pinocchio_model import to_pinocchio  # noqa: E402

ACC_RTOL = 1e-12
TREE_SEEDS = list(range(30))
T_FINAL = 2.0
RTOL, ATOL = 1e-11, 1e-12
COST_FACTOR = 1.3  # titopfmu RHS evaluations <= COST_FACTOR x Pinocchio's
#: an integration of the titopfmu RHS is abandoned beyond this many times Pinocchio's number of
#: evaluations (a failure either way; it keeps the tests fast when the RHS is noisy)
BUDGET_FACTOR = 50
DRIFT_FACTOR = 2.0
DRIFT_FLOOR = 1e-13  # x the momentum scale (sum of the bodies' momentum norms)


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def rel_err(a: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def accelerations(engine: Engine, ref, t: float, x: np.ndarray) -> np.ndarray:
    """[root ẋ'_P (6), u̇ of each joint in ``ref.joints`` order] from ``Engine.derivative``."""
    dx = engine.derivative(t, x)
    parts = [dx[ref.state_slices[ref.root]][7:13]]
    parts += [dx[ref.state_slices[j]][-ref.bodies[j].nv :] for j in ref.joints]
    return np.concatenate(parts)


# ----------------------------------------------------------------------------------------------
# a. welded pair
# ----------------------------------------------------------------------------------------------

T_PAIR = 0.3


@pytest.fixture(scope="module")
def welded_results():
    """ratio -> (engine derivative, ``root.acc`` signal, composite body, Pinocchio): the root
    acceleration ẋ'_P (6) of the pair (and of the composite body) at its initial state."""
    out = {}
    for ratio in MASS_RATIOS:
        d = WeldedPairData(ratio)
        pair, comp = welded_pair(d), composite_body(d)
        eng, eng_c = Engine(pair), Engine(comp)
        x = eng.initial_state()
        a = eng.derivative(T_PAIR, x)[7:13]
        a_sig = eng.signal(eng.evaluate(T_PAIR, x), "root.acc")
        a_comp = eng_c.derivative(T_PAIR, eng_c.initial_state())[7:13]
        a_pin = to_pinocchio(pair).accelerations(x, T_PAIR)[0:6]
        out[ratio] = (a, a_sig, a_comp, a_pin)
    return out


@pytest.mark.parametrize("ratio", MASS_RATIOS, ids=[f"{r:.0e}" for r in MASS_RATIOS])
def test_welded_pair_is_one_rigid_body(welded_results, ratio):
    """A RigidBody root + WeldedBody child = one RigidBody of the combined mass properties, at
    child/root mass ratios 1e-6 ... 1e6 (the heavier body weighs 1 kg; twist, gravity and an
    external wrench make every bias term nonzero). Errors: 2-norm relative to the reference
    acceleration, whose norm is O(10), for the state derivative and the ``root.acc`` signal."""
    a, a_sig, a_comp, a_pin = welded_results[ratio]
    # the references themselves: an O(1) acceleration, the same in both
    assert np.linalg.norm(a_comp) > 1.0
    assert rel_err(a_pin, a_comp) <= 1e-13, f"references differ: {rel_err(a_pin, a_comp):.3g}"
    errs = {
        "derivative vs composite": rel_err(a, a_comp),
        "derivative vs Pinocchio": rel_err(a, a_pin),
        "root.acc vs composite": rel_err(a_sig, a_comp),
        "root.acc vs Pinocchio": rel_err(a_sig, a_pin),
    }
    bad = {k: v for k, v in errs.items() if not v <= ACC_RTOL}
    assert not bad, (
        f"mass ratio {ratio:.0e}: relative errors "
        + ", ".join(f"{k} = {v:.3g}" for k, v in errs.items())
        + f" (tolerance {ACC_RTOL:g}, |a_ref| = {np.linalg.norm(a_comp):.3g})"
    )


# ----------------------------------------------------------------------------------------------
# b-d. random trees
# ----------------------------------------------------------------------------------------------


class Tree:
    """A random tree with its engine and Pinocchio reference (built once per module)."""

    def __init__(self, seed: int, loads: bool) -> None:
        self.seed = seed
        self.system, self.kinds = stability_tree(seed, loads=loads)
        self.engine = Engine(self.system)
        self.ref = to_pinocchio(self.system)
        self.momentum_signals = [n for n in self.engine.signal_names() if n.endswith(".momentum")]
        # moderate motion for the integrations (the same draw with and without loads)
        self.x0 = random_state(
            self.engine, np.random.default_rng(seed), speed=0.5, angle=1.0, stroke=0.2
        )

    def describe(self) -> str:
        kinds = list(self.kinds.values())
        counts = {k: kinds.count(k) for k in ("revolute", "prismatic", "welded")}
        masses = [self.system.blocks[n].mass for n in self.kinds]
        return (
            f"tree seed={self.seed} ({len(kinds)} bodies {counts}, masses "
            f"{min(masses):.3g}-{max(masses):.3g} kg)"
        )


@pytest.fixture(scope="module")
def trees():
    """(seed, loads) -> :class:`Tree`, built on first use."""
    cache: dict[tuple[int, bool], Tree] = {}

    def get(seed: int, loads: bool = True) -> Tree:
        if (seed, loads) not in cache:
            cache[(seed, loads)] = Tree(seed, loads)
        return cache[(seed, loads)]

    return get


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_tree_accelerations_match_aba(trees, seed):
    """Every generalized acceleration [root ẋ'_P, q̈] of ``Engine.derivative`` agrees with
    Pinocchio's ABA to 1e-12, norm-wise over the tree's acceleration vector:
    ‖a - a_pin‖₂ <= 1e-12 max(1, ‖a_pin‖₂), at 4 random states."""
    tree = trees(seed)
    rng = np.random.default_rng(2000 + seed)
    errs = []
    for _ in range(4):
        x = random_state(tree.engine, rng)
        t = float(rng.uniform(0.0, 5.0))
        a = accelerations(tree.engine, tree.ref, t, x)
        a_pin = tree.ref.accelerations(x, t)
        errs.append(float(np.linalg.norm(a - a_pin)) / max(1.0, float(np.linalg.norm(a_pin))))
    assert max(errs) <= ACC_RTOL, (
        f"{tree.describe()}: relative errors vs ABA "
        f"{', '.join(f'{e:.3g}' for e in errs)} > {ACC_RTOL:g}"
    )


class BudgetExceeded(Exception):
    pass


def integrate_titop(tree: Tree, budget: int, t_eval=None):
    """solve_ivp(Engine.derivative) with DOP853 from ``tree.x0``; returns (result or None,
    number of RHS evaluations, time reached)."""
    count = [0]
    reached = [0.0]

    def rhs(t, x):
        count[0] += 1
        reached[0] = max(reached[0], t)
        if count[0] > budget:
            raise BudgetExceeded
        return tree.engine.derivative(t, x)

    try:
        sol = solve_ivp(rhs, (0.0, T_FINAL), tree.x0, method="DOP853", rtol=RTOL, atol=ATOL,
                        t_eval=t_eval)  # fmt: skip
    except BudgetExceeded:
        return None, count[0] - 1, reached[0]
    assert sol.success, sol.message
    return sol, sol.nfev, T_FINAL


def integrate_pinocchio(tree: Tree, t_eval=None):
    q0, v0 = tree.ref.q_v(tree.x0)
    sol = tree.ref.simulate(T_FINAL, t_eval, q0=q0, v0=v0, method="DOP853", rtol=RTOL, atol=ATOL)
    assert sol.success, sol.message
    return sol


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_integration_cost_within_pinocchio(trees, seed):
    """DOP853, rtol 1e-11, atol 1e-12, 2 s from the same state: the number of right-hand-side
    evaluations of ``Engine.derivative`` is at most 1.3 times that of Pinocchio's ABA (a noisy
    right-hand side makes the step-size control reject steps). The titopfmu run is abandoned
    beyond 50 times Pinocchio's count (then reported as a lower bound)."""
    tree = trees(seed)
    n_pin = integrate_pinocchio(tree).nfev
    sol, n_titop, reached = integrate_titop(tree, BUDGET_FACTOR * n_pin)
    what = f"{n_titop}" if sol is not None else f">= {n_titop} (abandoned at t = {reached:.3g} s)"
    assert sol is not None and n_titop <= COST_FACTOR * n_pin, (
        f"{tree.describe()}: titopfmu {what} RHS evaluations, Pinocchio {n_pin} "
        f"(ratio {n_titop / n_pin:.3g}{'' if sol is not None else '+'}, allowed {COST_FACTOR})"
    )


def pinocchio_momentum(ref, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[linear; angular about the inertial origin] momentum, inertial frame, from Pinocchio."""
    q = q.copy()
    q[3:7] /= np.linalg.norm(q[3:7])
    model, data = ref.model, ref.data
    pin.forwardKinematics(model, data, q, v)
    total = np.zeros(6)
    for j in range(1, model.njoints):
        f = data.oMi[j].act(model.inertias[j] * data.v[j])
        total += np.concatenate([f.linear, f.angular])
    return total


def titop_momenta(tree: Tree, t: float, x: np.ndarray) -> np.ndarray:
    """The bodies' ``momentum`` signals (rows), inertial frame, about the inertial origin."""
    ev = tree.engine.evaluate(t, x)
    return np.array([tree.engine.signal(ev, n) for n in tree.momentum_signals])


def drift(m: np.ndarray) -> tuple[float, float]:
    """Largest deviation from the first sample of the linear and the angular momentum."""
    d = m - m[0]
    return float(np.max(np.linalg.norm(d[:, 0:3], axis=1))), float(
        np.max(np.linalg.norm(d[:, 3:6], axis=1))
    )


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_momentum_drift_within_pinocchio(trees, seed):
    """The same tree with zero gravity (every block), zero joint efforts and no external wrench,
    free-floating root: total linear and angular momentum (inertial frame, about the inertial
    origin; the sum of the bodies' ``momentum`` signals) is conserved. Over 2 s of DOP853 at
    rtol 1e-11, atol 1e-12 (21 samples), titopfmu's largest drift of each must satisfy
    ``drift_titop <= 2 drift_pinocchio + 1e-13 scale``, scale = the sum over bodies of the norms
    of their momenta at t = 0 (so that both at rounding level passes). The titopfmu run is
    abandoned (a failure) beyond 50 times Pinocchio's number of evaluations."""
    tree = trees(seed, loads=False)
    t_eval = np.linspace(0.0, T_FINAL, 21)
    sol_p = integrate_pinocchio(tree, t_eval)
    sol_t, n_titop, reached = integrate_titop(tree, BUDGET_FACTOR * sol_p.nfev, t_eval)
    assert sol_t is not None, (
        f"{tree.describe()}, no loads: titopfmu needed more than {n_titop} RHS evaluations "
        f"({BUDGET_FACTOR} x Pinocchio's {sol_p.nfev}; abandoned at t = {reached:.3g} s)"
    )
    nq = tree.ref.nq
    m_p = np.array([pinocchio_momentum(tree.ref, y[:nq], y[nq:]) for y in sol_p.y.T])
    bodies = [titop_momenta(tree, t, x) for t, x in zip(sol_t.t, sol_t.y.T, strict=True)]
    m_t = np.array([b.sum(axis=0) for b in bodies])
    scale_lin = float(np.sum(np.linalg.norm(bodies[0][:, 0:3], axis=1)))
    scale_ang = float(np.sum(np.linalg.norm(bodies[0][:, 3:6], axis=1)))
    # same initial momentum in both models (the mapping of states and momenta is right)
    assert np.allclose(m_t[0], m_p[0], rtol=0, atol=1e-12 * (scale_lin + scale_ang))
    d_t, d_p = drift(m_t), drift(m_p)
    scales = (scale_lin, scale_ang)
    limits = [DRIFT_FACTOR * dp + DRIFT_FLOOR * s for dp, s in zip(d_p, scales, strict=True)]
    assert d_t[0] <= limits[0] and d_t[1] <= limits[1], (
        f"{tree.describe()}, no loads: momentum drift linear titopfmu {d_t[0]:.3g} / Pinocchio "
        f"{d_p[0]:.3g} (limit {limits[0]:.3g}, scale {scale_lin:.3g} kg m/s), angular titopfmu "
        f"{d_t[1]:.3g} / Pinocchio {d_p[1]:.3g} (limit {limits[1]:.3g}, scale "
        f"{scale_ang:.3g} kg m²/s); RHS evaluations titopfmu {n_titop}, Pinocchio {sol_p.nfev}"
    )
