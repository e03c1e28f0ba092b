"""Seeded random titopfmu trees for the reference tests (import: ``from random_trees import ...``).

A tree is one :class:`~titopfmu.RigidBody` root and 1-11 descendants (2-12 bodies), each hanging
from a random earlier body (random branching) through a revolute, prismatic or (rarely) welded
joint with random axis, random constant DCM and random child-port offset. Masses 0.5-5 kg, full
random SPD inertias (point masses allowed off the root when the joint still sees an inertia),
off-centre COMs, one gravity vector for all blocks, a constant external wrench on the root (and
sometimes on other bodies), random constant joint efforts (some joints get a spring-damper law).
With ``multi_dof=True`` the joints may also be spherical (3 dof) or free (6 dof) ones, with
constant efforts of their size and no point masses (their apparent inertia would be singular).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from titopfmu import (
    Constant,
    Engine,
    FreeBody,
    JointSpringDamper,
    PrismaticBody,
    RevoluteBody,
    RigidBody,
    SphericalBody,
    System,
    WeldedBody,
)


@dataclass
class TreeSpec:
    """What :func:`random_tree` built, for the tests' messages and state generators."""

    seed: int
    n_bodies: int
    kinds: dict[str, str] = field(default_factory=dict)  # root/revolute/prismatic/welded/...
    parents: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        kinds = list(self.kinds.values())
        counts = {k: kinds.count(k) for k in ("revolute", "prismatic", "welded")}
        counts.update({k: kinds.count(k) for k in ("spherical", "free") if k in kinds})
        return f"seed={self.seed} n_bodies={self.n_bodies} {counts}"


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    return Rotation.random(random_state=rng).as_matrix()


def random_inertia(rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """Full SPD inertia at the COM: principal moments obeying the triangle inequality, random
    principal axes."""
    while True:
        m = rng.uniform(0.05, 1.0, 3) * scale
        s = np.sort(m)
        if s[0] + s[1] > 1.02 * s[2]:
            break
    R = random_rotation(rng)
    i = R @ np.diag(m) @ R.T
    return 0.5 * (i + i.T)


def random_unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_offset(rng: np.random.Generator, lo: float, hi: float) -> np.ndarray:
    return random_unit(rng) * rng.uniform(lo, hi)


def random_tree(
    seed: int,
    n_bodies: int | None = None,
    *,
    welded: bool = True,
    point_masses: bool = True,
    laws: bool = True,
    extra_wrenches: bool = True,
    multi_dof: bool = False,
) -> tuple[System, TreeSpec]:
    """A random tree of ``n_bodies`` (2-12; random when None) bodies, seeded.

    ``multi_dof``: also draw spherical and free joints (the default trees are unchanged).

    Blocks: ``root`` (RigidBody), ``b1``... (joint bodies); signal blocks ``tau_<b>`` (Constant
    efforts) or ``law_<b>`` (JointSpringDamper), ``w_root`` (root wrench), ``w_<b>`` (others).
    """
    rng = np.random.default_rng(seed)
    if n_bodies is None:
        n_bodies = int(rng.integers(2, 13))
    if not 2 <= n_bodies <= 12:
        raise ValueError("n_bodies must be in 2..12")
    g = random_unit(rng) * 9.81
    spec = TreeSpec(seed, n_bodies)
    # structure first: parents and joint kinds
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n_bodies)]
    kinds = ["root"]
    for _ in range(1, n_bodies):
        u = rng.uniform()
        if multi_dof:
            if welded and u < 0.08:
                kinds.append("welded")
            else:
                kinds.append(
                    "revolute" if u < 0.32 else "prismatic" if u < 0.5 else
                    "spherical" if u < 0.78 else "free"
                )  # fmt: skip
            continue
        if welded and u < 0.12:
            kinds.append("welded")
        elif u < 0.56:
            kinds.append("revolute")
        else:
            kinds.append("prismatic")
    if all(k in ("root", "welded") for k in kinds):
        kinds[-1] = "revolute"
    names = ["root"] + [f"b{i}" for i in range(1, n_bodies)]
    children: list[dict[str, np.ndarray]] = [{} for _ in range(n_bodies)]
    for i in range(1, n_bodies):
        children[parents[i]][f"c{i}"] = random_offset(rng, 0.1, 1.0)
    s = System(f"random_tree_{seed}")
    for i, name in enumerate(names):
        kind = kinds[i]
        mass = float(rng.uniform(0.5, 5.0))
        com = random_offset(rng, 0.05, 0.5)
        point = point_masses and kind not in ("root", "spherical", "free") and rng.uniform() < 0.2
        inertia = np.zeros((3, 3)) if point else random_inertia(rng, 0.5)
        common = dict(com=com, children=children[i] or None, gravity=g)
        ext = None
        if kind == "root" or (extra_wrenches and rng.uniform() < 0.2):
            frame = "body" if rng.uniform() < 0.5 else "inertial"
            ext = {"w": {"point": tuple(random_offset(rng, 0.0, 0.6)), "frame": frame}}
            s.add(Constant(f"w_{name}", np.concatenate([rng.normal(0, 5, 3), rng.normal(0, 2, 3)])))
        common["external"] = ext
        if kind == "root":
            b = RigidBody(name, mass, random_inertia(rng), **common)
        elif kind == "revolute":
            axis = random_unit(rng) * rng.uniform(0.5, 2.0)  # not normalised on purpose
            if point:  # keep the apparent inertia m |r x com|^2 away from zero
                r = axis / np.linalg.norm(axis)
                perp = np.cross(r, random_unit(rng))
                common["com"] = com + 0.3 * perp / np.linalg.norm(perp)
            b = RevoluteBody(name, mass, inertia, axis=axis, P_a0b=random_rotation(rng), **common)
        elif kind == "prismatic":
            axis = random_unit(rng)
            b = PrismaticBody(name, mass, inertia, axis=axis, P_ab=random_rotation(rng), **common)
        elif kind == "spherical":
            b = SphericalBody(name, mass, inertia, P_a0b=random_rotation(rng), **common)
        elif kind == "free":
            b = FreeBody(name, mass, inertia, P_a0b=random_rotation(rng), **common)
        else:
            b = WeldedBody(name, mass, inertia, P_ab=random_rotation(rng), **common)
        s.add(b)
        spec.kinds[name] = kind
        if ext:
            s.connect(f"w_{name}.y", f"{name}.w")
        if i:
            spec.parents[name] = names[parents[i]]
            s.connect(f"{names[parents[i]]}.c{i}", f"{name}.P")
        if kind in ("revolute", "prismatic"):
            if laws and rng.uniform() < 0.3:
                s.add(
                    JointSpringDamper(
                        f"law_{name}",
                        k=float(rng.uniform(0.0, 20.0)),
                        d=float(rng.uniform(0.0, 2.0)),
                        q_ref=float(rng.uniform(-0.5, 0.5)),
                    )
                )
                s.connect(f"{name}.joint.m", f"law_{name}.m")
                s.connect(f"law_{name}.tau", f"{name}.joint.tau")
            else:
                s.add(Constant(f"tau_{name}", float(rng.normal(0.0, 2.0))))
                s.connect(f"tau_{name}.y", f"{name}.joint.tau")
        elif kind in ("spherical", "free"):
            s.add(Constant(f"tau_{name}", rng.normal(0.0, 1.0, b.joint.dof)))
            s.connect(f"tau_{name}.y", f"{name}.joint.tau")
    return s, spec


def random_state(
    engine: Engine,
    rng: np.random.Generator,
    *,
    speed: float = 1.0,
    angle: float = np.pi,
    stroke: float = 0.5,
) -> np.ndarray:
    """A random engine state: root position, attitude (uniform), twist; joint q and q̇.

    Revolute angles in ±``angle`` rad, prismatic strokes in ±``stroke`` m, rates in ±``speed``;
    spherical and free joints: uniform random relative attitude, free-joint translation
    components in ±``stroke`` m, relative velocities and angular velocities in ±``speed``.
    """
    x = engine.initial_state()
    for b in engine.tree_blocks:
        sl = engine.plan.state_slices[b.name]
        if isinstance(b, RigidBody):
            qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
            x[sl] = np.concatenate(
                [
                    rng.uniform(-5, 5, 3),
                    [qw, qx, qy, qz],
                    rng.uniform(-speed, speed, 3),
                    rng.uniform(-speed, speed, 3),
                ]
            )
        elif isinstance(b, RevoluteBody):
            x[sl] = [rng.uniform(-angle, angle), rng.uniform(-speed, speed)]
        elif isinstance(b, PrismaticBody):
            x[sl] = [rng.uniform(-stroke, stroke), rng.uniform(-speed, speed)]
        elif isinstance(b, (SphericalBody, FreeBody)):
            qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
            quat = [qw, qx, qy, qz]
            k = b.joint.dof
            if isinstance(b, FreeBody):
                quat = np.concatenate([rng.uniform(-stroke, stroke, 3), quat])
            x[sl] = np.concatenate([quat, rng.uniform(-speed, speed, k)])
    return x
