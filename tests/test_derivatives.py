"""Exact first derivatives of the state derivative (complex step in the C core).

``Engine.jacobian`` / ``NativeTree.jacobian`` run the core compiled on complex numbers. They are
compared with Pinocchio's analytical ABA derivatives (``computeABADerivatives``: ∂q̈/∂q, ∂q̈/∂v
and M^-1 = ∂q̈/∂τ) mapped to titopfmu's coordinates, and with central differences of the
derivative itself on every kind of system (loop closures, inverse joints, imposed motions,
spherical and free joints).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from random_trees import random_state, random_tree
from test_loop_closure import four_bar
from test_native import ground_tree, imposed_motion_system, tethered_pendulum

from titopfmu import Engine, InertiaWarning
from titopfmu.examples.balloon import BalloonParameters, build_balloon

pin = pytest.importorskip("pinocchio")
from titopfmu.reference import to_pinocchio  # noqa: E402

#: relative agreement with Pinocchio's analytical derivatives (issue: 1e-9)
PIN_RTOL = 1e-9


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def central_jacobian(engine: Engine, t: float, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """∂(dx/dt)/∂x by central differences with the core's inputs held (as Engine.jacobian)."""
    nt = engine.native
    inputs = engine._native_inputs(t, x)
    data = nt.new_data()
    n = x.size
    J = np.empty((n, n))
    for k in range(n):
        cols = []
        for s in (1.0, -1.0):
            xp = x.copy()
            xp[k] += s * h
            d = np.empty(n)
            assert nt.derivative(t, xp, inputs, d, data) == 0
            cols.append(d)
        J[:, k] = (cols[0] - cols[1]) / (2 * h)
    return J


CASES = {
    "tree": lambda: random_tree(4)[0],
    "multi_dof_tree": lambda: random_tree(3, multi_dof=True)[0],
    "balloon": build_balloon,
    "ground_tree": ground_tree,
    "four_bar": lambda: four_bar(1e4),
    "tether": tethered_pendulum,
    "imposed": imposed_motion_system,
}


@pytest.mark.parametrize("name", CASES)
def test_jacobian_matches_central_differences(name):
    engine = Engine(CASES[name]())
    rng = np.random.default_rng(5)
    x = engine.initial_state() + 0.3 * rng.normal(size=engine.n_states)
    J = engine.jacobian(0.4, x)
    Jc = central_jacobian(engine, 0.4, x)
    scale = max(1.0, float(np.max(np.abs(J))))
    err = float(np.max(np.abs(J - Jc)))
    assert err < 1e-6 * scale, f"{name}: |exact - central| = {err:.3g} (scale {scale:.3g})"
    assert np.all(np.isfinite(J))


def quaternion_tangent(q: np.ndarray) -> np.ndarray:
    """∂q/∂δθ (4×3) of q ⊗ exp(δθ/2) at δθ = 0, q = [w, x, y, z] (local angular tangent)."""
    w, x, y, z = q / np.linalg.norm(q)
    return 0.5 * np.array([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]])


def pinocchio_derivatives(ref, t: float, x: np.ndarray, wrenches: dict | None):
    """Pinocchio's (∂a/∂q, ∂a/∂v, M^-1) in titopfmu's acceleration order, with the efforts'
    own dependence on (q, v) (joint laws) added through M^-1 (central differences of the
    reference's effort functions, which are affine)."""
    q, v = ref.q_v(x)
    tau = ref.efforts(t, q, v)
    fext = ref.external_forces(t, q, v, wrenches)
    pin.computeABADerivatives(ref.model, ref.data, q, v, tau, fext)
    dq, dv = ref.data.ddq_dq.copy(), ref.data.ddq_dv.copy()
    Minv = ref.data.Minv.copy()
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    h = 1e-4
    for k in range(ref.nv):  # dτ/dv and dτ/dq of the joint laws (affine: exact differences)
        e = np.zeros(ref.nv)
        e[k] = h
        dv[:, k] += Minv @ (ref.efforts(t, q, v + e) - ref.efforts(t, q, v - e)) / (2 * h)
        qp, qm = pin.integrate(ref.model, q, e), pin.integrate(ref.model, q, -e)
        dq[:, k] += Minv @ (ref.efforts(t, qp, v) - ref.efforts(t, qm, v)) / (2 * h)
    idx = ref._acc_index
    return dq[idx], dv[idx], Minv[idx]


def titop_derivatives(engine: Engine, ref, t: float, x: np.ndarray, inputs: np.ndarray):
    """The engine's (∂a/∂q, ∂a/∂v, ∂a/∂τ) in Pinocchio's tangent coordinates, titopfmu order."""
    jx, jin = engine.native.jacobian(t, x, inputs)
    root = engine.plan.state_slices[ref.root]
    rows = [np.arange(root.start + 7, root.start + 13)]
    vcols = [np.arange(root.start + 7, root.start + 13)]
    for j in ref.joints:
        sl = engine.plan.state_slices[j]
        rows.append([sl.start + 1])
        vcols.append([sl.start + 1])
    rows = np.concatenate(rows)
    vcols = np.concatenate(vcols)
    dv = jx[np.ix_(rows, vcols)]
    # root: position (inertial) and quaternion to the local tangent [δp, δθ]
    quat = x[root.start + 3 : root.start + 7]
    w, qx, qy, qz = quat / np.linalg.norm(quat)
    R = np.array(
        [[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - w * qz), 2 * (qx * qz + w * qy)],
         [2 * (qx * qy + w * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - w * qx)],
         [2 * (qx * qz - w * qy), 2 * (qy * qz + w * qx), 1 - 2 * (qx * qx + qy * qy)]]
    )  # fmt: skip
    dq_root = np.hstack(
        [jx[np.ix_(rows, range(root.start, root.start + 3))] @ R,
         jx[np.ix_(rows, range(root.start + 3, root.start + 7))] @ quaternion_tangent(quat)]
    )  # fmt: skip
    qcols = [engine.plan.state_slices[j].start for j in ref.joints]
    dq = np.hstack([dq_root, jx[np.ix_(rows, qcols)]])
    # efforts: the core's joint.tau inputs, by block
    offs = {engine.tree_blocks[i].name: off for i, port, w, off in engine.native.inputs
            if port == "joint.tau"}  # fmt: skip
    return dq, dv, jin, rows, offs


def compare(name, got, ref, what):
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(got - ref)))
    assert err <= PIN_RTOL * scale, (
        f"{name} {what}: |titopfmu - pinocchio| = {err:.3g} (scale {scale:.3g})"
    )


def zero_inertial_wrenches(engine: Engine, s) -> tuple[np.ndarray, dict]:
    """Inputs with the inertial-frame external wrenches zeroed: Pinocchio's derivatives hold the
    external forces fixed in the local frames, so only body-frame ones compare."""
    return (
        [off for i, e, off in engine.native.externals
         if engine.tree_blocks[i].external[e].frame == "inertial"],
        {f"{engine.tree_blocks[i].name}.{e}": np.zeros(6) for i, e, _ in engine.native.externals
         if engine.tree_blocks[i].external[e].frame == "inertial"},
    )  # fmt: skip


SYSTEMS = {f"tree{s}": (lambda s=s: random_tree(s)[0]) for s in range(8)}
SYSTEMS["balloon"] = build_balloon
SYSTEMS["balloon_conservative"] = lambda: build_balloon(BalloonParameters().conservative())


@pytest.mark.parametrize("name", SYSTEMS)
def test_jacobian_matches_pinocchio_aba_derivatives(name):
    s = SYSTEMS[name]()
    engine = Engine(s)
    ref = to_pinocchio(s)
    rng = np.random.default_rng(77)
    inertial, overrides = zero_inertial_wrenches(engine, s)
    for k in range(3):
        x = random_state(engine, rng)
        t = float(rng.uniform(0, 3))
        inputs = engine._native_inputs(t, x).copy()
        for off in inertial:
            inputs[off : off + 6] = 0.0
        dq_t, dv_t, jin, rows, offs = titop_derivatives(engine, ref, t, x, inputs)
        dq_p, dv_p, Minv = pinocchio_derivatives(ref, t, x, overrides)
        compare(name, dv_t, dv_p, f"state {k} ∂a/∂v")
        compare(name, dq_t, dq_p, f"state {k} ∂a/∂q")
        for j, joint in enumerate(ref.joints):  # M^-1 columns of the joints with an input
            if joint in offs:
                compare(name, jin[rows, offs[joint]], Minv[:, 6 + j], f"state {k} ∂a/∂τ_{joint}")
