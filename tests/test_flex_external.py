"""External wrench inputs at a flexible body's nodes (issue 34 point 1; docs/flexible.md §0, §6):
a block's ``external`` wrench whose point is a node k >= 1 of its reduced model acts at that
node (the core's titop_ext.node, set by titop_model_init), by docs eq. (E4) with the node's
Jacobian Psi_k, in the node frame N_k's components for ``frame: body``.

References: (1) the same system with a massless rigid body welded at the node carrying the
wrench (the child-port path of the flexible articulated-body step, independent of the node
wrench's) and the numpy reference (titopfmu.reference.flexible: node_forces, titop_direct) at
q = 0; (2) the static tip deflection of a cantilever, F L^3 / (3 E I); (3) an inertial-frame
wrench on a turned body; (4) complex-step derivatives against central differences; (5) the
whole-model FMU's derivative against the engine's.
"""

from __future__ import annotations

import numpy as np
import pytest

import titopfmu as t
from titopfmu.flex import Beam, Section, craig_bampton
from titopfmu.reference import flexible as ref

Z3 = np.zeros((3, 3))
NO_G = (0.0, 0.0, 0.0)
WRENCH = (0.7, -1.3, 2.1, 0.05, -0.08, 0.03)  # N, N m


def beam(n_elements: int = 12) -> Beam:
    """A 1 m aluminium strip, 30 x 8 mm, along x_a."""
    return Beam("strip", 1.0, 70e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=n_elements)  # fmt: skip


@pytest.fixture(scope="module")
def red():
    """Craig-Bampton with the tip node kept (6 constraint modes) and 4 fixed-interface modes,
    a little damping; node 1 is the tip."""
    fe = beam().fe_model()
    return craig_bampton(fe, 4, [fe.n_nodes - 1], damping=0.01)


def tip(red) -> tuple[float, ...]:
    return tuple(float(v) for v in red.node_positions[1])


def cantilever(red, *, via_child: bool = False, frame: str = "body",
               joint: float | str | None = None, wrench=WRENCH) -> t.System:  # fmt: skip
    """The strip clamped at P: welded on Ground (``joint`` None), on a revolute joint about z_a
    turned by ``joint`` rad, or (``joint`` "free") a free-floating root with a rigid hub at P,
    tumbling; a constant wrench ``wrench`` at its tip node, as an external wrench of the beam
    (``via_child`` False) or of a massless rigid body welded at the tip node (its frame the node
    frame N_1), given in ``frame``; no gravity."""
    s = t.System("tip_wrench")
    ext = {"w": {"point": tip(red), "frame": frame}}
    kw: dict = {"children": {"tip": tip(red)}} if via_child else {"external": ext}
    if joint == "free":
        s.add(t.RigidBody("beam", 2.0, np.diag([0.1, 0.2, 0.3]), flexible=red, gravity=NO_G,
                          euler=(0.3, -0.2, 0.5), twist=(0.1, -0.2, 0.05, 0.3, -0.2, 0.5),
                          **kw))  # fmt: skip
    elif joint is None:
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=NO_G, **kw))
    else:
        s.add(t.RevoluteBody("beam", 0.0, Z3, axis=(0.0, 0.0, 1.0), theta0=joint, flexible=red,
                             gravity=NO_G, **kw))  # fmt: skip
        s.add(t.Constant("tau", 0.0))
        s.connect("tau.y", "beam.joint.tau")
    if joint != "free":
        s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.connect("ground.P", "beam.P")
    s.add(t.Constant("wrench", list(wrench)))
    if via_child:
        s.add(t.WeldedBody("tipb", 0.0, Z3, gravity=NO_G,
                           external={"w": {"point": (0.0, 0.0, 0.0), "frame": frame}}))
        s.connect("beam.tip", "tipb.P")
        s.connect("wrench.y", "tipb.w")
    else:
        s.connect("wrench.y", "beam.w")
    return s


def states(rng, red, n_joint: int = 0) -> list[np.ndarray]:
    """Elastic states [joint, q, q̇] at rest and deflected, vibrating."""
    n = red.n_modes
    amp = 2e-3 / np.sqrt(np.diag(red.Mee))
    out = [np.zeros(n_joint + 2 * n)]
    for _ in range(3):
        j = np.concatenate([[0.4], rng.normal(size=n_joint - 1)]) if n_joint else np.zeros(0)
        out.append(np.concatenate([j, amp * rng.normal(size=n), 30 * amp * rng.normal(size=n)]))
    return out


@pytest.mark.parametrize("frame", ["body", "inertial"])
def test_free_floating_root(red, frame: str) -> None:
    """(1b) On a tumbling free-floating root (a rigid hub at P beside the strip), a tip wrench
    equals the massless welded child's, at the initial and at deflected, vibrating states."""
    rng = np.random.default_rng(12)
    e_node = t.Engine(cantilever(red, frame=frame, joint="free"))
    e_child = t.Engine(cantilever(red, via_child=True, frame=frame, joint="free"))
    x0 = e_node.initial_state()
    n = red.n_modes
    for x in [x0, *(np.concatenate([x0[:13], z]) for z in states(rng, red)[1:])]:
        assert x.size == 13 + 2 * n
        want = e_child.derivative(0.0, x)
        np.testing.assert_allclose(e_node.derivative(0.0, x), want, rtol=0,
                                   atol=1e-10 * np.abs(want).max())  # fmt: skip


def test_tip_wrench_equals_a_massless_child_and_the_reference(red) -> None:
    """(1) A constant wrench at the tip node of the clamped strip: the state derivative equals
    the system's with a massless rigid body welded at the node carrying the wrench (any q, q̇;
    1e-10 relative) and, at q = 0, the reference's q̈ with the node's generalised forces
    (node_forces, titop_direct). The wrench does excite the modes: q̈ differs from the unloaded
    beam's."""
    rng = np.random.default_rng(34)
    e_node, e_child = t.Engine(cantilever(red)), t.Engine(cantilever(red, via_child=True))
    e_free = t.Engine(cantilever(red, wrench=(0.0,) * 6))
    desc = cantilever(red).blocks["beam"].ports["w"].description  # the block says where
    assert "about node 1 of the flexible part" in desc and "frame N_1" in desc, desc
    n = red.n_modes
    for x in states(rng, red):
        dx = e_node.derivative(0.0, x)
        want = e_child.derivative(0.0, x)
        scale = np.abs(want).max()
        np.testing.assert_allclose(dx, want, rtol=0, atol=1e-10 * scale)
        assert np.abs(dx - e_free.derivative(0.0, x)).max() > 1e-3 * scale
        if not x[:n].any():  # q = 0: N_1's axes are R_a's
            W = np.array(WRENCH)
            f = ref.node_forces(red, x[:n], red.node_ids[1], W[:3], W[3:])
            u = np.concatenate([np.zeros(6), x[n:]])
            qdd, _ = ref.titop_direct(red, x[:n], u, np.zeros(3), np.zeros(3), f, {})
            np.testing.assert_allclose(dx[n:], qdd, rtol=0, atol=1e-10 * np.abs(qdd).max())


def test_static_tip_deflection() -> None:
    """(2) A constant tip force F along z_a (then y_a) on the clamped strip, trimmed: the tip
    deflection is F L^3 / (3 E I) (I_y, then I_z). Craig-Bampton keeping the tip node: its
    static constraint modes make the static solution the finite-element one, exact at the nodes
    for these (Euler-Bernoulli) elements, hence 1e-9 (the issue asks 1e-3; 6 cantilever modes
    alone are 6e-4 short, 12 1.2e-4). A dead load: given in R_i (= R_a here); in the node frame
    ('body') it would follow the tip's rotation, cos(0.028 rad) = 1 - 3.9e-4 of it bending."""
    b = beam(20)
    fe = b.fe_model()
    red = craig_bampton(fe, 4, [fe.n_nodes - 1])
    for axis, inertia in ((2, b.section.Iy), (1, b.section.Iz)):
        F = 5.0
        w = np.zeros(6)
        w[axis] = F
        tr = t.trim(cantilever(red, wrench=w, frame="inertial"))
        q = tr.x[: red.n_modes]
        deflection = (red.node_shapes[1][:3] @ q)[axis]
        assert deflection == pytest.approx(F * b.length**3 / (3 * b.E * inertia), rel=1e-9)


@pytest.mark.parametrize("frame", ["inertial", "body"])
def test_wrench_on_a_turned_body(red, frame: str) -> None:
    """(3) The strip on a revolute joint about z turned by 0.7 rad: an inertial-frame (or a
    body-frame) wrench at its tip node equals the massless welded child's (the rigid body's own
    rotation of an external wrench), at rest and deflected; at q = 0 the inertial wrench equals
    the body-frame wrench P_{a/i}^T W rotated by hand."""
    rng = np.random.default_rng(7)
    angle = 0.7
    e_node = t.Engine(cantilever(red, frame=frame, joint=angle))
    e_child = t.Engine(cantilever(red, via_child=True, frame=frame, joint=angle))
    for x in states(rng, red, n_joint=2):
        x[0] = angle
        want = e_child.derivative(0.0, x)
        np.testing.assert_allclose(e_node.derivative(0.0, x), want, rtol=0,
                                   atol=1e-10 * np.abs(want).max())  # fmt: skip
    if frame == "inertial":
        c, s = np.cos(angle), np.sin(angle)
        R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])  # P_{a/i}
        W = np.array(WRENCH)
        e_body = t.Engine(cantilever(red, frame="body", joint=angle,
                                     wrench=np.concatenate([R.T @ W[:3], R.T @ W[3:]])))
        x = np.concatenate([[angle, 0.3], np.zeros(2 * red.n_modes)])
        want = e_body.derivative(0.0, x)
        np.testing.assert_allclose(e_node.derivative(0.0, x), want, rtol=0,
                                   atol=1e-12 * np.abs(want).max())  # fmt: skip


def test_complex_step_jacobian(red) -> None:
    """(4) Engine.jacobian (complex step through the node wrench's frame and Jacobian) against
    central differences, on the turned strip with an inertial tip wrench, deflected beyond the
    series' bound of exp(θ~) at the tip (|θ| > 0.1); and the input Jacobian's wrench columns
    (linear in the wrench: tight)."""
    rng = np.random.default_rng(9)
    e = t.Engine(cantilever(red, frame="inertial", joint=0.7))
    n = red.n_modes
    x = np.concatenate([[0.7, 0.4], 0.05 * rng.normal(size=n) / np.sqrt(np.diag(red.Mee)),
                        0.5 * rng.normal(size=n)])  # fmt: skip
    assert np.linalg.norm(red.node_shapes[1][3:] @ x[2 : 2 + n]) > 0.1
    J = e.jacobian(0.0, x)
    for k in range(x.size):
        h = 1e-6 * max(1e-3, abs(x[k]))
        d = np.zeros_like(x)
        d[k] = h
        fd = (e.derivative(0.0, x + d) - e.derivative(0.0, x - d)) / (2 * h)
        np.testing.assert_allclose(J[:, k], fd, rtol=1e-5, atol=1e-6 * np.abs(J).max())
    # and the input columns of the wrench (the core's, at the engine's inputs)
    nt = e.native
    inputs = np.asarray(e._native_inputs(0.0, x), dtype=float)
    _, jin = nt.jacobian(0.0, x, inputs)
    (off,) = [o for i, name, o in nt.externals if name == "w"]
    data = nt.new_data()

    def f(ii):
        dx = np.zeros(x.size)
        assert nt.derivative(0.0, x, ii, dx, data) == 0
        return dx

    assert np.abs(jin[:, off : off + 6]).max() > 0.0
    for k in range(off, off + 6):
        d = np.zeros_like(inputs)
        d[k] = 1.0  # linear in the wrench: a large step, small rounding
        fd = (f(inputs + d) - f(inputs - d)) / 2.0
        np.testing.assert_allclose(jin[:, k], fd, rtol=1e-7, atol=1e-9 * np.abs(jin).max())


def test_model_fmu_derivative_is_the_engines(red, tmp_path) -> None:
    """(5) The whole-model FMU (model exchange) of the turned strip with an inertial tip wrench:
    its state derivative equals the engine's at the initial and at deflected states (1e-9)."""
    pytest.importorskip("fmpy")
    from fmu_helpers import MeInstance

    s = cantilever(red, frame="inertial", joint=0.7)
    e = t.Engine(s)
    me = MeInstance(t.export_fmu(cantilever(red, frame="inertial", joint=0.7),
                                 tmp_path / "tip.fmu", win64=False))  # fmt: skip
    try:
        x0 = me.state()
        np.testing.assert_array_equal(x0, e.initial_state())
        for x in [x0, *states(np.random.default_rng(5), red, n_joint=2)[1:]]:
            want = e.derivative(0.0, x)
            np.testing.assert_allclose(me.derivative(x), want, rtol=1e-9,
                                       atol=1e-9 * np.abs(want).max())  # fmt: skip
    finally:
        me.close()


def test_a_point_off_the_nodes_stays_on_the_floating_frame(red) -> None:
    """(1c) A wrench at a point that is not a node (here 0.3 m along the strip, off its nodes
    0 and 1; and a point 1e-6 m off the tip node: beyond the 1e-9 tolerance) acts on the
    floating frame, as on a rigid body: the reference's q̈ with the generalised forces
    [F; PE x F + T; 0] (no elastic part), at q = 0 (the strip is welded on Ground: what the
    floating frame takes goes to the ground; a node's wrench would have moved q̈)."""
    n = red.n_modes
    W = np.array(WRENCH)
    for point in ((0.3, 0.0, 0.0), (tip(red)[0] + 1e-6, 0.0, 0.0)):
        s = t.System("off_node")
        s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=NO_G,
                           external={"w": {"point": point, "frame": "body"}}))  # fmt: skip
        s.add(t.Constant("wrench", list(W)))
        s.connect("ground.P", "beam.P")
        s.connect("wrench.y", "beam.w")
        assert "node" not in s.blocks["beam"].ports["w"].description
        qd = np.linspace(-0.2, 0.3, n)
        dx = t.Engine(s).derivative(0.0, np.concatenate([np.zeros(n), qd]))
        f = np.concatenate([W[:3], np.cross(point, W[:3]) + W[3:], np.zeros(n)])
        u = np.concatenate([np.zeros(6), qd])
        qdd, _ = ref.titop_direct(red, np.zeros(n), u, np.zeros(3), np.zeros(3), f, {})
        np.testing.assert_allclose(dx[n:], qdd, rtol=0, atol=1e-10 * np.abs(qdd).max())
