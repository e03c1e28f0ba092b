"""Exercise the C core through its extension (run by test_core_memory.py in a subprocess, under
AddressSanitizer/UBSan or valgrind): models of every block kind, loop closures, joint laws,
full evaluations, exact Jacobians and refusals (non-finite values, singular joints). Prints one
line per system with a checksum; ``--extension PATH`` loads that build of
``titopfmu.core._titop`` (e.g. a sanitized one) instead of the installed one. ``--smoke``: the
extension's joint helpers alone, without importing titopfmu (whose imports, scipy's, take most
of a run under valgrind). The file of the extension loaded and the process id go to stderr
("core extension PATH pid N")."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings

parser = argparse.ArgumentParser()
parser.add_argument("--extension", default=None)
parser.add_argument("--quick", action="store_true")
parser.add_argument("--smoke", action="store_true")
args = parser.parse_args()
if args.extension:
    spec = importlib.util.spec_from_file_location("titopfmu.core._titop", args.extension)
    _titop = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(_titop)
    sys.modules["titopfmu.core._titop"] = _titop  # what titopfmu imports
else:
    from titopfmu.core import _titop
print(f"core extension {_titop.__file__} pid {os.getpid()}", file=sys.stderr)

import numpy as np  # noqa: E402


def joint_values() -> list:
    """Positions and coordinates of the joints with a dof through the extension's helpers."""
    values = []
    for kind, nq, nv in ((4, 1, 1), (5, 1, 1), (6, 4, 3), (7, 7, 6)):
        p, q = np.full(nv, np.nan), np.full(nq, np.nan)
        _titop.joint_coordinates(kind, np.linspace(0.1, 0.6, nv), q)
        _titop.joint_position(kind, q, p)
        values += [p, q]
    return values


if args.smoke:
    print(f"joints {sum(float(np.sum(v)) for v in joint_values()):.17g}")
    print("done")
    sys.exit()

sys.path.insert(0, __file__.rsplit("/", 2)[0])  # tests/
from random_trees import random_state, random_tree  # noqa: E402
from test_loop_closure import four_bar  # noqa: E402
from test_native import ground_tree, imposed_motion_system, tethered_pendulum  # noqa: E402

from titopfmu import Engine  # noqa: E402
from titopfmu.examples.balloon import build_balloon  # noqa: E402

warnings.simplefilter("ignore")


def rotors():
    """Rotor inertias (armature) on forward and inverse joints and a massless link with a
    child: the sweep's D = S^T Ia S + armature, the inverse effort's armature u̇."""
    from titopfmu import (
        Constant,
        Ground,
        PrismaticBodyInverse,
        RevoluteBody,
        SphericalBody,
        System,
    )

    s = System("rotors")
    s.add(Ground("g", children={"O": (0.0, 0.0, 0.0), "Q": (0.3, 0.0, 0.0)}),
          RevoluteBody("ghost", 0.0, np.zeros((3, 3)), axis=(0, 0, 1), armature=0.1,
                       theta0=0.2, children={"C": (0.0, 0.2, 0.0)}),
          SphericalBody("ball", 1.5, np.diag([0.1, 0.2, 0.15]), com=(0.1, 0.0, -0.2),
                        armature=[0.05, 0.1, 0.2], omega0=(0.3, -0.2, 0.5)),
          PrismaticBodyInverse("slide", 0.7, np.eye(3) * 0.01, axis=(1, 0, 0), armature=0.4),
          Constant("t1", 0.2), Constant("t2", [0.1, 0.0, -0.1]),
          Constant("m3", [0.5, 0.1, 0.05]))  # fmt: skip
    s.connect("g.O", "ghost.P")
    s.connect("ghost.C", "ball.P")
    s.connect("g.Q", "slide.P")
    s.connect("t1.y", "ghost.joint.tau")
    s.connect("t2.y", "ball.joint.tau")
    s.connect("m3.y", "slide.joint.m")
    return s


def stops():
    """Joint laws with friction and stops, each joint started inside a stop (one entering it
    faster than its damping bound, one leaving it): every branch of the law."""
    from titopfmu import Ground, JointSpringDamper, RevoluteBody, System

    s = System("stops")
    inertia = np.diag([0.02, 0.03, 0.01])
    s.add(Ground("g", children={"A": (0.0, 0.0, 0.0)}),
          RevoluteBody("l1", 2.0, inertia, axis=(0, 1, 0), com=(0.3, 0, 0), theta0=0.6,
                       theta_dot0=3.0, children={"B": (0.6, 0, 0)}),
          RevoluteBody("l2", 1.0, inertia, axis=(0, 1, 0), com=(0.25, 0, 0), theta0=-0.35,
                       theta_dot0=0.5),
          JointSpringDamper("j1", friction=0.5, limited=True, lower=-0.6, upper=0.5,
                            k_stop=2e3, d_stop=40.0),
          JointSpringDamper("j2", k=1.0, d=0.05, friction=0.1, friction_velocity=0.01,
                            limited=True, lower=-0.3, upper=0.8, k_stop=500.0,
                            d_stop=10.0))  # fmt: skip
    s.connect("g.A", "l1.P")
    s.connect("l1.B", "l2.P")
    for j, b in (("j1", "l1"), ("j2", "l2")):
        s.connect(f"{b}.joint.m", f"{j}.m")
        s.connect(f"{j}.tau", f"{b}.joint.tau")
    return s


def mimics():
    """Two mimic joints (titop_mimic) on a free-flying root: a revolute follower and a prismatic
    one, an inverse joint beside them: the constraint's bias-free sweeps through a rigid root,
    forward and inverse joints, and the k x k solve."""
    from titopfmu import (
        Constant,
        JointMimic,
        PrismaticBody,
        PrismaticBodyInverse,
        RevoluteBody,
        RigidBody,
        System,
    )

    s = System("mimics")
    inertia = np.diag([0.02, 0.03, 0.01])
    s.add(RigidBody("root", 5.0, np.diag([0.5, 0.4, 0.3]), twist=(0.1, 0, 0, 0.2, -0.1, 0.3),
                    children={"A": (0.2, 0, 0), "B": (-0.2, 0, 0), "C": (0, 0.3, 0)}),
          RevoluteBody("lead", 1.0, inertia, axis=(0, 0, 1), com=(0.2, 0, 0), theta0=0.3,
                       theta_dot0=1.0, children={"D": (0.4, 0, 0)}),
          RevoluteBody("follow", 0.6, inertia, axis=(0, 1, 0), com=(0.1, 0.05, 0)),
          PrismaticBody("slead", 0.8, inertia, axis=(1, 0, 0), x0=0.1,
                        children={"E": (0.1, 0, 0)}),
          PrismaticBody("sfollow", 0.4, inertia, axis=(0, 1, 0), com=(0.0, 0.1, 0.0)),
          PrismaticBodyInverse("imposed", 0.3, inertia, axis=(0, 0, 1)),
          Constant("t1", 0.3), Constant("t2", -0.2), Constant("m3", [0.5, 0.1, 0.05]),
          JointMimic("m_rev", multiplier=-1.5, offset=0.2),
          JointMimic("m_pri", multiplier=0.7, offset=-0.05))  # fmt: skip
    for a, b in (("root.A", "lead.P"), ("lead.D", "follow.P"), ("root.B", "slead.P"),
                 ("slead.E", "sfollow.P"), ("root.C", "imposed.P"), ("t1.y", "lead.joint.tau"),
                 ("t2.y", "slead.joint.tau"), ("m3.y", "imposed.joint.m"),
                 ("lead.joint.m", "m_rev.m"), ("m_rev.tau", "follow.joint.tau"),
                 ("slead.joint.m", "m_pri.m"), ("m_pri.tau", "sfollow.joint.tau")):
        s.connect(a, b)
    return s


def joint_springs():
    """A damped, sprung free-flying root (titop_body.damping, stiffness, spring_ref,
    spring_pos) carrying a damped, sprung free joint body and ball joint body."""
    from titopfmu import Constant, FreeBody, RigidBody, SphericalBody, System

    q0 = (0.9, 0.1, -0.3, 0.2)
    inertia = np.diag([0.02, 0.03, 0.01])
    s = System("springs")
    s.add(RigidBody("root", 2.0, np.diag([0.5, 0.4, 0.3]), com=(0.05, 0.0, -0.1),
                    twist=(0.1, -0.2, 0.3, 0.4, -0.1, 0.2), damping=0.3, stiffness=2.0,
                    spring_ref=np.array(q0) / np.linalg.norm(q0), spring_position=(0.1, 0, 0),
                    children={"A": (0.2, 0, 0), "B": (0, 0.3, 0)}),
          FreeBody("free", 0.7, inertia, com=(0.1, 0.0, 0.0), position0=(0.1, 0.2, 0.0),
                   euler0=(0.3, -0.2, 0.1), omega0=(0.5, 0.0, -0.3), damping=0.2, stiffness=1.5,
                   spring_position=(0.0, 0.1, 0.0)),
          SphericalBody("ball", 0.5, inertia, com=(0.0, 0.0, -0.2), euler0=(0.2, 0.1, 0.0),
                        damping=0.1, stiffness=0.8),
          Constant("t6", np.zeros(6)), Constant("t3", [0.1, 0.0, -0.1]))  # fmt: skip
    for a, b in (("root.A", "free.P"), ("root.B", "ball.P"), ("t6.y", "free.joint.tau"),
                 ("t3.y", "ball.joint.tau")):  # fmt: skip
        s.connect(a, b)
    return s


systems = {
    "balloon": build_balloon,
    "tree": lambda: random_tree(3)[0],
    "multi_dof": lambda: random_tree(5, multi_dof=True)[0],
    "ground_tree": ground_tree,
    "four_bar": lambda: four_bar(1e4),
    "tether": tethered_pendulum,
    "imposed": imposed_motion_system,
    "rotors": rotors,
    "stops": stops,
    "mimics": mimics,
    "joint_springs": joint_springs,
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
    # the object path: every block through its one-body core model (titop_block_*: kinematics,
    # bias, loop map, response, acceleration, state rate; titop_cut_block for the closures);
    # mimic joints are the core's only
    ev = e.evaluate(0.1, x) if not nt.mimics else None
    if ev is not None:
        total += float(np.sum(e.object_derivative(0.1, x)))
    for b in e.tree_blocks if ev is not None else ():
        i = e.tree_index[b.name]
        sig = {p: e._input(ev, b.name, p) for p, _ in e.inputs[b.name]}
        w_c = ev.sol.w_c[i] if b.n_children else None
        r = b.respond(ev.kin[b.name], sig, ev.sol.acc_p[i], w_c)
        total += float(np.sum(r.acc)) + float(np.sum(e.signal(ev, f"{b.name}.acc")))
        total += sum(float(np.sum(v)) for v in (r.w_p, r.acc_c, r.extra) if v is not None)
        total += (
            float(np.sum(b.bias(ev.kin[b.name].twist, ev.kin[b.name].R, sig)))
            if hasattr(b, "bias")
            else 0.0
        )
    for lc in e.closure_sides:
        total += float(np.sum(e.signal(ev, f"{lc}.potential_energy")))
    # motion vectors of a full evaluation, on doubles and on complex values
    zd = np.zeros(nt.data_size, dtype=complex)
    zx = x.astype(complex) + 1e-100j
    zi = e._native_inputs(0.0, x).astype(complex)
    assert nt.model.zeval(zd, 0.0, zx, zi, True, np.zeros(x.size, dtype=complex)) == 0
    for i, b in enumerate(e.tree_blocks):
        out, zout = np.full(18, np.nan), np.full(18, np.nan, dtype=complex)
        nt.model.body_motion(full, i, out)
        nt.model.zbody_motion(zd, i, zout)
        total += float(np.sum(out)) + float(np.sum(zout.real))
        k = getattr(getattr(b, "joint", None), "dof", 0)
        if k:
            out, zout = np.full(3 * k, np.nan), np.full(3 * k, np.nan, dtype=complex)
            nt.model.joint_motion(full, i, out)
            nt.model.zjoint_motion(zd, i, zout)
            total += float(np.sum(out)) + float(np.sum(zout.real))
    for j in range(len(nt.port_wrenches(full))):
        out, zout = np.full(18, np.nan), np.full(18, np.nan, dtype=complex)
        nt.model.port_motion(full, j, out)
        nt.model.zport_motion(zd, j, zout)
        total += float(np.sum(out)) + float(np.sum(zout.real))
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
def flexible_models():
    """Flexible parts (titop_flex): a beam on a revolute joint of an imposed-motion root, a
    free-floating flexible root, and a beam carrying a rigid link at a node (its child port)
    and a wrench input at another; the reduced model's arrays, M_P* and q̈ through the sweep."""
    from titopfmu.blocks import ImposedMotionBody, RevoluteBody, RigidBody
    from titopfmu.core.model import NativeTree
    # a reduced model of made-up arrays (no eigensolver: its rounding differs under valgrind),
    # small couplings so that M(q) is positive definite
    g = np.random.default_rng(11)
    n = 4
    A = g.normal(size=(n, n))

    class Red:
        # node cases at node 1 (a tree child's or an external wrench's) and node 2 (a known
        # port wrench's or an external one's): the core's passes on the load values
        n_modes, node_ids = n, (0, 1, 2)
        load_cases = ("ax", "wzz", "wxy", "node1.fx", "alx", "node2.fy", "node1.mz")
        mass, first_moment, inertia = 1.5, np.array([0.7, 0.0, 0.1]), np.diag([0.1, 0.5, 0.5])
        Ct, Cr = 0.05 * g.normal(size=(3, n)), 0.05 * g.normal(size=(3, n))
        Mee, Kee = 0.1 * (A + A.T) + n * np.eye(n), np.diag([10.0, 20.0, 30.0, 40.0])
        KG = 0.1 * np.array([np.eye(n)] * 7)
        _J1, _J2, _Cr1 = (0.01 * g.normal(size=s) for s in ((n, 3, 3), (n, n, 3, 3), (n, 3, n)))
        J1, J2, Cr1 = (staticmethod(lambda a=a: a) for a in (_J1, _J2, _Cr1))
        damping = staticmethod(lambda: 0.01 * np.eye(n))
        node_positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.1, 0.0]])
        node_shapes = 0.3 * g.normal(size=(3, 6, n))

    red = Red()
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]),
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    # external wrenches at its nodes 1 (body: node frame) and 2 (inertial; a node without a
    # child port) and one off the nodes (on the floating frame): titop_ext.node
    arm = RevoluteBody("beam", 0.0, np.zeros((3, 3)), axis=(0.0, 0.0, 1.0), armature=1e-3,
                       external={"tip": {"point": (1.0, 0.0, 0.0), "frame": "body"},
                                 "mid": {"point": (0.5, 0.1, 0.0), "frame": "inertial"},
                                 "off": {"point": (0.3, 0.0, 0.0), "frame": "body"}})  # fmt: skip
    free = RigidBody("free", 0.5, np.diag([0.01, 0.02, 0.03]))
    q = 1e-2 * np.arange(1, 2 * n + 1)
    yield "flex_revolute", NativeTree([root, arm], [None, (0, 0)], [0, 0], flex=[(1, red, 2)]), (
        np.concatenate([[0.3, 1.0], q]),
        np.concatenate([0.1 * np.arange(18), [0.2], 0.1 * np.sin(np.arange(18))]))
    x = np.concatenate([[0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0, 0.1, -0.2, 0.3, 0.5, -0.4, 0.2], q])
    yield "flex_root", NativeTree([free], [None], [0], flex=[(0, red, 13)]), (x, np.zeros(0))
    beam = RevoluteBody("beam", 0.0, np.zeros((3, 3)), axis=(0.0, 0.0, 1.0), armature=1e-3,
                        children={"tip": (1.0, 0.0, 0.0), "mid": (0.5, 0.1, 0.0)})  # fmt: skip
    link = RevoluteBody("link", 0.3, np.diag([0.01, 0.02, 0.02]), com=(0.2, 0.0, 0.0),
                        axis=(0.0, 1.0, 0.0))  # fmt: skip
    tree = NativeTree([root, beam, link], [None, (0, 0), (1, 0)], [0, 0, 2 + 2 * n],
                      flex=[(1, red, 2)], boundary_ports=[(1, 1)])  # fmt: skip
    xs = np.concatenate([[0.3, 1.0], q, [0.4, -0.5]])
    yield "flex_nodes", tree, (xs, np.concatenate([0.1 * np.arange(18), [0.2, -0.1],
                                                   [0.5, -0.2, 0.1, 0.05, 0.0, -0.03]]))
    # a flexible body hanging at a flexible body's node: the parent's condensation redone in
    # every pass of the load values (flex_subtree_fixed)
    arm2 = RevoluteBody("beam2", 0.0, np.zeros((3, 3)), axis=(0.0, 1.0, 0.0), armature=1e-3)
    tree2 = NativeTree([root, beam, arm2], [None, (0, 0), (1, 0)], [0, 0, 2 + 2 * n],
                       flex=[(1, red, 2), (2, red, 4 + 2 * n)], boundary_ports=[(1, 1)])
    xs2 = np.concatenate([[0.3, 1.0], q, [0.4, -0.5], 0.5 * q])
    yield "flex_nested", tree2, (xs2, np.concatenate([0.1 * np.arange(18), [0.2, 0.1],
                                                      [0.5, -0.2, 0.1, 0.05, 0.0, -0.03]]))

    # the same at 10x elastic states with a 300x geometric stiffness: the plain passes do not
    # settle (rate near or above 1), the exact affine solve of the load values does (flex_next:
    # its probe passes, LU, refinement; its work block at the end of the data)
    class Strong(Red):
        KG = 300.0 * Red.KG

    strong = Strong()
    tree3 = NativeTree([root, beam, arm2], [None, (0, 0), (1, 0)], [0, 0, 2 + 2 * n],
                       flex=[(1, strong, 2), (2, strong, 4 + 2 * n)], boundary_ports=[(1, 1)])
    xs3 = np.concatenate([[0.3, 1.0], 10.0 * q, [0.4, -0.5], 5.0 * q])
    yield "flex_coupled", tree3, (xs3, np.concatenate([0.1 * np.arange(18), [0.2, 0.1],
                                                       [0.5, -0.2, 0.1, 0.05, 0.0, -0.03]]))


for name, nt, (x, inputs) in flexible_models():
    full = np.full(nt.data_size, np.nan)
    dx = np.full(x.size, np.nan)
    assert nt.derivative(0.1, x, inputs, dx, full, full=True) == 0
    assert np.all(np.isfinite(dx)), name
    jx, jin = nt.jacobian(0.1, x, inputs, np.full(nt.model.zwork_size, np.nan))
    assert np.all(np.isfinite(jx)) and np.all(np.isfinite(jin)), name
    total = float(np.sum(dx)) + float(np.sum(jx)) + float(np.sum(jin))
    zd = np.zeros(nt.data_size, dtype=complex)
    assert nt.model.zeval(zd, 0.0, x.astype(complex) + 1e-100j, inputs.astype(complex), True,
                          np.zeros(x.size, dtype=complex)) == 0  # fmt: skip
    out = np.full(18, np.nan)
    nt.model.body_motion(full, len(nt.blocks) - 1, out)
    total += float(np.sum(out))
    bad = x.copy()
    bad[-1] = np.nan
    r = nt.derivative(0.0, bad, inputs, np.empty(x.size), nt.new_data())
    assert r != 0 and r[0] == 2, r
    print(f"{name} {total:.17g}")
# spatial and joint helpers of the extension
from titopfmu.spatial.rotations import (  # noqa: E402
    dcm_from_euler,
    dcm_from_quaternion,
    euler_from_dcm,
    quaternion_from_euler,
    quaternion_rate,
    rotation_vector,
)

th = np.array([0.3, -1.2, 2.0])
vals = [dcm_from_euler(th), euler_from_dcm(dcm_from_euler(th)), quaternion_from_euler(th),
        dcm_from_quaternion([0.9, 0.1, -0.2, 0.3]), quaternion_rate([0.9, 0.1, -0.2, 0.3], th),
        rotation_vector(dcm_from_euler(0.1 * th)), *joint_values()]  # fmt: skip
row = np.array([3.0, 0.2, 0.1, 0.7, 0.05, 1.0, -0.5, 0.4, 400.0, 30.0])  # the joint law's row
tau = np.zeros(1)
for m in ([0.0, -20.0, -0.55], [0.0, 2.0, -0.55], [0.0, 0.3, 0.45], [0.0, 0.01, 0.2]):
    _titop.joint_law(row, np.array(m), tau)
    vals.append(tau.copy())
assert _titop.check_law(row) is None and _titop.check_law(row * -1.0)[0] == "k"
print(f"helpers {sum(float(np.sum(v)) for v in vals):.17g}")
print("done")
