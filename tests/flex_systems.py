"""Systems with flexible bodies shared by the flexible-body tests (tests/test_flex_block.py,
tests/test_flex_model_fmu.py): one builder each, so that the engine's and the FMUs' tests run
the same models."""

from __future__ import annotations

import numpy as np

import titopfmu as t
from titopfmu.flex import Beam, Section

Z3 = np.zeros((3, 3))


def strip(n_elements: int = 12, length: float = 1.0, section=None) -> Beam:
    """An aluminium strip along x_a (30 x 8 mm by default)."""
    return Beam("strip", length, 70e9, 2700.0, section or Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=n_elements)  # fmt: skip


def pendulum(red, q0=None, qd0=None, gravity=(0.0, 0.0, -9.81), theta0=0.3) -> t.System:
    """A flexible strip on a revolute joint (axis y_a: it swings in the x-z plane) on Ground,
    with a small rigid part (0.2 kg, off P)."""
    s = t.System("flexible_pendulum")
    s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
    s.add(t.RevoluteBody("arm", 0.2, np.diag([1e-4, 1e-4, 1e-4]), com=(0.01, 0.0, 0.02),
                         axis=(0.0, 1.0, 0.0), flexible=red, theta0=theta0, elastic_q0=q0,
                         elastic_qdot0=qd0, gravity=gravity))  # fmt: skip
    s.add(t.Constant("tau", 0.0))
    s.connect("ground.P", "arm.P")
    s.connect("tau.y", "arm.joint.tau")
    return s


def linked(red, q0=None) -> t.System:
    """The flexible strip on a revolute joint carrying a rigid link on a revolute joint at its
    tip node (a child port at the reduced model's node 1: docs/flexible.md §6), the strip's
    initial elastic state q0 (None: undeformed, its modes excited by the swing)."""
    s = t.System("flexible_and_rigid_links")
    tip = [float(v) for v in red.node_positions[1]]
    s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
    s.add(t.RevoluteBody("arm", 0.2, np.diag([1e-4, 1e-4, 1e-4]), axis=(0.0, 1.0, 0.0),
                         flexible=red, theta0=0.3, elastic_q0=q0,
                         children={"tip": tip}))  # fmt: skip
    s.add(t.RevoluteBody("link", 0.5, np.diag([1e-3, 2e-3, 2e-3]), com=(0.2, 0.0, 0.0),
                         axis=(0.0, 1.0, 0.0), theta0=-0.4, theta_dot0=1.0))  # fmt: skip
    for b in ("arm", "link"):
        s.add(t.Constant(f"tau_{b}", 0.0))
        s.connect(f"tau_{b}.y", f"{b}.joint.tau")
    s.connect("ground.P", "arm.P")
    s.connect("arm.tip", "link.P")
    return s


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def hub_with_arrays(red, *, moving: bool = False, rigid: bool = False, hub_mass: float = 40.0,
                    hub_inertia=(4.0, 5.0, 6.0), arm: float = 0.5) -> t.System:  # fmt: skip
    """A free-floating rigid hub carrying two flexible arrays on revolute joints (axis z), one
    along +x at (arm, 0, 0), the other along -x at (-arm, 0, 0); no gravity, no joint torque.
    ``moving``: the hub tumbling, the joints turning, the arrays deflected and vibrating (at
    rest otherwise). ``rigid``: each array replaced by the rigid body of its undeformed mass,
    centre of mass and inertia (the same motion otherwise)."""
    s = t.System("hub_and_arrays")
    twist = (0.1, -0.2, 0.05, 0.3, -0.2, 0.5) if moving else (0.0,) * 6
    s.add(t.RigidBody("hub", hub_mass, np.diag(hub_inertia), gravity=(0.0, 0.0, 0.0),
                      children={"left": (arm, 0.0, 0.0), "right": (-arm, 0.0, 0.0)},
                      twist=twist))  # fmt: skip
    n = red.n_modes
    for k, (side, angle) in enumerate((("left", 0.0), ("right", np.pi))):
        kw: dict = {"theta_dot0": 0.4 * (1 - 2 * k)} if moving else {}
        if rigid:
            m, com = red.mass, red.first_moment / red.mass
            inertia = red.inertia - m * (com @ com * np.eye(3) - np.outer(com, com))
        else:
            m, com, inertia = 0.0, np.zeros(3), Z3
            kw["flexible"] = red
            if moving:
                kw["elastic_q0"] = 2e-3 * np.cos(np.arange(n) + k)
                kw["elastic_qdot0"] = 2e-2 * np.sin(np.arange(n) + k)
        s.add(t.RevoluteBody(f"array_{side}", m, inertia, com=com, axis=(0.0, 0.0, 1.0),
                             P_a0b=rot_z(angle), gravity=(0.0, 0.0, 0.0), **kw))  # fmt: skip
        s.add(t.Constant(f"tau_{side}", 0.0))
        s.connect(f"hub.{side}", f"array_{side}.P")
        s.connect(f"tau_{side}.y", f"array_{side}.joint.tau")
    return s


def check_jacobian(tree, x, inputs, x_floor: float = 1.0, input_columns=None) -> None:
    """The core's exact (complex-step) Jacobians of a NativeTree's dx/dt at (t = 0, ``x``,
    ``inputs``) against central differences, column by column (rel 1e-5, abs 1e-6 of the
    largest entry): steps 1e-6 max(``x_floor``, |x_k|) on the states, 1e-6 on the inputs of
    ``input_columns`` (all by default)."""
    import pytest

    jx, jin = tree.jacobian(0.0, x, inputs)
    data = tree.new_data()

    def f(xx, ii):
        dx = np.zeros(tree.n_states)
        assert tree.derivative(0.0, xx, ii, dx, data) == 0
        return dx

    for k in range(tree.n_states):
        h = 1e-6 * max(x_floor, abs(x[k]))
        e = np.zeros_like(x)
        e[k] = h
        fd = (f(x + e, inputs) - f(x - e, inputs)) / (2 * h)
        assert jx[:, k] == pytest.approx(fd, rel=1e-5, abs=1e-6 * np.abs(jx).max()), k
    for k in range(inputs.size) if input_columns is None else input_columns:
        e = np.zeros_like(inputs)
        e[k] = 1e-6
        fd = (f(x, inputs + e) - f(x, inputs - e)) / 2e-6
        assert jin[:, k] == pytest.approx(fd, rel=1e-5, abs=1e-6 * np.abs(jin).max()), k
