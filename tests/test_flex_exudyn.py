"""The C core's flexible body (titop_flex, docs/flexible.md, issue 34) against Exudyn: the same
reduced beam, free-floating and tumbling with a rigid hub, in Exudyn's reduced-order floating
frame body (ObjectFFRFreducedOrder, fed the same kinetic energy and modes: see
tests/exudyn_reference.py), trajectories agree to 1e-6; Kane, Ryan and Banerjee's spin-up beam
against Exudyn's geometrically exact ANCF cable elements, the tip's deflection within 1 %.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

pytest.importorskip("exudyn")

import exudyn_reference  # noqa: E402

from titopfmu.blocks import ImposedMotionBody, RigidBody  # noqa: E402
from titopfmu.core.model import NativeTree  # noqa: E402
from titopfmu.flex import Beam, Section, cantilever_modes  # noqa: E402


def test_ffrf_matches_exudyn_reduced_order_body() -> None:
    """A 1 m beam of order-one properties (bending 7.9 and 9.9 rad/s, axial 15.8 rad/s; torsion
    stiff, 97 rad/s, so that the 6 lowest cantilever modes carry none) with a rigid hub at P,
    free-floating, no gravity, tumbling at ~3 rad/s (centrifugal softening and Coriolis
    coupling of the order of the elastic stiffness) with initial elastic displacements and
    rates: at 0.5 s and 1 s, P's position, the frame's rotation and the elastic coordinates agree
    with Exudyn's to 1e-6 (both integrated at a tolerance of 1e-11: measured 3e-11). No geometric
    stiffness on our side (Exudyn's FFRF has none): the model is reduced without load cases."""
    beam = Beam("unit", 1.0, 100.0, 1.0, Section(1.0, 0.05, 0.08, 10.0), G=50.0, n_elements=6)
    fe = beam.fe_model()
    red = cantilever_modes(fe, 6, list(range(1, fe.n_nodes)), load_cases=[])
    assert red.KG.shape[0] == 0
    n = red.n_modes
    mr, Ir = 0.3, np.diag([0.02, 0.01, 0.015])
    tw0 = np.array([0.1, -0.05, 0.02, 1.0, 2.5, -1.5])
    rng = np.random.default_rng(4)
    q0, qd0 = 0.05 * rng.standard_normal(n), 0.3 * rng.standard_normal(n)

    root = RigidBody("hub", mr, Ir, gravity=(0.0, 0.0, 0.0), twist=tuple(tw0))
    tree = NativeTree([root], [None], [0], flex=[(0, red, 13)])
    data = tree.new_data()

    def rhs(t, x):
        dx = np.zeros_like(x)
        assert tree.derivative(t, x, np.zeros(0), dx, data) == 0
        return dx

    times = (0.5, 1.0)
    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([root.initial_state(), q0, qd0]),
                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)  # fmt: skip
    assert sol.success
    for t, x in zip(times, np.ascontiguousarray(sol.y.T), strict=True):
        assert tree.derivative(t, x, np.zeros(0), None, data) == 0
        R = data[tree.layout["R"] : tree.layout["R"] + 9].reshape(3, 3)
        model = exudyn_reference.ffrf_model(beam, red, mr, Ir, tw0, q0, qd0)
        p_ex, R_ex, q_ex = exudyn_reference.ffrf_solve(model, t, 1e-11)
        # not trivial: the body moved, turned and the elastic coordinates changed by O(1)
        assert np.linalg.norm(x[:3]) > 0.3 and np.abs(R - np.eye(3)).max() > 0.3
        assert np.abs(x[13 : 13 + n] - q0).max() > 0.05
        assert x[:3] == pytest.approx(p_ex, abs=1e-6)
        assert R == pytest.approx(R_ex, abs=1e-6)
        assert x[13 : 13 + n] == pytest.approx(q_ex, abs=1e-6 * np.abs(q_ex).max())


def test_kane_ryan_banerjee_spin_up_matches_geometrically_exact_beam() -> None:
    """Kane, Ryan and Banerjee 1987 (the parameters of tests/test_flex_dynamics.py: L = 10 m,
    E = 7e10 Pa, A = 4e-4 m^2, I = 2e-7 m^4, rho A = 1.2 kg/m) clamped on a hub spun 0 -> 6
    rad/s in 15 s (imposed-motion root), our core with its geometric stiffness (the default
    load cases, 8 cantilever modes) against Exudyn's geometrically exact planar ANCF cable (10
    elements, generalized-alpha, step 2 ms) over 22 s: the tip's lag deflection in the hub
    frame, max |difference| / max |deflection| < 1 % (measured 0.096 %; the maxima, -0.5743 m
    and -0.5738 m, both at t = 6.76 s; converged: 20 ANCF elements at 1 ms give the same to
    1e-5 m); it settles near the radial line (< 1 cm) at constant spin: bounded."""
    length, E, A, I, rho = 10.0, 7e10, 4e-4, 2e-7, 3000.0
    beam = Beam("krb", length, E, rho, Section(A, I, I, 2 * I), nu=0.3, n_elements=10)
    fe = beam.fe_model()
    red = cantilever_modes(fe, 8, [fe.n_nodes - 1])
    assert "wzz" in red.load_cases  # centrifugal geometric stiffness on
    hub = ImposedMotionBody("hub", 1.0, np.eye(3), gravity=(0.0, 0.0, 0.0))
    tree = NativeTree([hub], [None], [0], flex=[(0, red, 0)])
    data, n = tree.new_data(), red.n_modes

    def rhs(t, x):
        _, spin, spin_dot = exudyn_reference.spin_profile(t)
        mv = np.zeros(18)  # the motion vector (docs/fmus.md): omega_dot [3:6], omega [9:12]
        mv[5], mv[11] = spin_dot, spin
        dx = np.zeros_like(x)
        assert tree.derivative(t, x, mv, dx, data) == 0
        return dx

    t_ex, tip_ex = exudyn_reference.ancf_spin_up(length, E * A, E * I, rho * A, 10, 22.0, 2e-3)
    sol = solve_ivp(rhs, (0.0, 22.0), np.zeros(2 * n), method="DOP853", rtol=1e-8,
                    atol=1e-10, t_eval=t_ex)  # fmt: skip
    assert sol.success
    tip = red.node_shapes[-1][1] @ sol.y[:n]
    scale = np.abs(tip_ex).max()
    assert 0.3 < scale < 1.0  # the benchmark's lag (not trivial)
    assert np.abs(tip - tip_ex).max() < 0.01 * scale
    assert np.abs(tip[t_ex > 17.0]).max() < 0.01
