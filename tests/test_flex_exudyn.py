"""The C core's flexible body (titop_flex, docs/flexible.md, issue 34) against Exudyn: the same
reduced beam, free-floating and tumbling with a rigid hub, in Exudyn's reduced-order floating
frame body (ObjectFFRFreducedOrder, fed the same kinetic energy and modes: see
tests/exudyn_reference.py); trajectories agree to 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

pytest.importorskip("exudyn")

import exudyn_reference  # noqa: E402

from titopfmu.blocks import RigidBody  # noqa: E402
from titopfmu.core.model import NativeTree  # noqa: E402
from titopfmu.flex import Beam, Section, cantilever_modes  # noqa: E402


def test_ffrf_matches_exudyn_reduced_order_body() -> None:
    """A 1 m beam of order-one properties (bending 7.9 and 9.9 rad/s, axial 15.8 rad/s; torsion
    stiff, 97 rad/s, so that the 6 lowest cantilever modes carry none) with a rigid hub at P,
    free-floating, no gravity, tumbling at ~3 rad/s (centrifugal softening and Coriolis
    coupling of the order of the elastic stiffness) with initial elastic displacements and
    rates: over 1 s, P's position, the frame's rotation and the elastic coordinates agree with
    Exudyn's to 1e-6 (both integrated at a tolerance of 1e-11: measured 3e-11). No geometric
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

    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([root.initial_state(), q0, qd0]),
                    method="DOP853", rtol=1e-12, atol=1e-12)  # fmt: skip
    assert sol.success
    x = sol.y[:, -1]
    assert tree.derivative(1.0, x, np.zeros(0), None, data) == 0
    R = data[tree.layout["R"] : tree.layout["R"] + 9].reshape(3, 3)

    model = exudyn_reference.ffrf_model(beam, red, mr, Ir, tw0, q0, qd0)
    p_ex, R_ex, q_ex = exudyn_reference.ffrf_solve(model, 1.0, 1e-11)
    # not trivial: the body moved, turned and the elastic coordinates changed by O(1)
    assert np.linalg.norm(x[:3]) > 0.5 and np.abs(R - np.eye(3)).max() > 0.5
    assert np.abs(x[13 : 13 + n] - q0).max() > 0.05
    assert x[:3] == pytest.approx(p_ex, abs=1e-6)
    assert R == pytest.approx(R_ex, abs=1e-6)
    assert x[13 : 13 + n] == pytest.approx(q_ex, abs=1e-6 * np.abs(q_ex).max())
