"""Systems of the numerical-stability tests (issue 18), built through the public API only.

Import as ``from stability_trees import ...`` (tests) or after putting ``tests/`` on ``sys.path``
(``scripts/diagnose_conditioning.py``).

* :func:`welded_pair`: a light or heavy :class:`~titopfmu.RigidBody` root carrying a
  :class:`~titopfmu.WeldedBody` child at a given child/root mass ratio (the heavier of the two
  weighs 1 kg), with a nonzero twist, gravity and an external wrench on the root, so that every
  bias term is nonzero and the root acceleration is O(1);
* :func:`composite_body`: the same pair as ONE RigidBody, its mass properties combined with plain
  numpy (parallel-axis theorem), independent of the engine;
* :func:`stability_tree`: seeded random trees of 2-15 bodies, masses 0.1-100 kg (log-uniform),
  inertias proportional to the mass, revolute / prismatic / welded joints; ``loads=False`` gives
  the same tree with zero gravity, zero joint efforts and no external wrench (free floating).
"""

from __future__ import annotations

import numpy as np
from random_trees import random_inertia, random_offset, random_rotation, random_unit

from titopfmu import (
    Constant,
    JointSpringDamper,
    PrismaticBody,
    RevoluteBody,
    RigidBody,
    System,
    WeldedBody,
)

#: child/root mass ratios of the welded-pair case: 1e-6 ... 1e6, every decade
MASS_RATIOS = [10.0**e for e in range(-6, 7)]


def _parallel(d: np.ndarray) -> np.ndarray:
    """Parallel-axis term per unit mass: |d|² 1 - d dᵀ."""
    return float(d @ d) * np.eye(3) - np.outer(d, d)


class WeldedPairData:
    """The parameters of a welded pair (all in the root frame unless said otherwise)."""

    def __init__(self, ratio: float, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.ratio = ratio
        self.m_root, self.m_child = (1.0 / ratio, 1.0) if ratio >= 1.0 else (1.0, ratio)
        self.I_root = self.m_root * random_inertia(rng)
        self.I_child = self.m_child * random_inertia(rng)  # at its COM, in the child frame
        self.com_root = random_offset(rng, 0.1, 0.5)
        self.com_child = random_offset(rng, 0.1, 0.5)  # child frame
        self.port = random_offset(rng, 0.3, 1.0)  # P -> child port C
        self.P_ab = random_rotation(rng)  # child frame -> root frame
        self.gravity = random_unit(rng) * 9.81
        self.position = rng.uniform(-2.0, 2.0, 3)
        self.euler = rng.uniform(-1.0, 1.0, 3)
        self.twist = np.concatenate([rng.uniform(-1.0, 1.0, 3), rng.uniform(-2.0, 2.0, 3)])
        total = self.m_root + self.m_child
        # O(1) accelerations from the wrench whatever the ratio (the total mass is about 1 kg)
        self.wrench = total * np.concatenate([rng.normal(0, 3, 3), rng.normal(0, 1, 3)])
        self.wrench_point = random_offset(rng, 0.0, 0.6)


def welded_pair(d: WeldedPairData) -> System:
    """``root`` (RigidBody) + ``tip`` (WeldedBody at the root's port ``c``) + ``w`` (wrench)."""
    s = System(f"welded_pair_{d.ratio:g}")
    s.add(
        RigidBody(
            "root", d.m_root, d.I_root, com=d.com_root, children={"c": d.port},
            external={"w": {"point": tuple(d.wrench_point), "frame": "body"}},
            gravity=d.gravity, position=d.position, euler=d.euler, twist=d.twist,
        ),
        WeldedBody("tip", d.m_child, d.I_child, P_ab=d.P_ab, com=d.com_child, gravity=d.gravity),
        Constant("w", d.wrench),
    )  # fmt: skip
    s.connect("root.c", "tip.P")
    s.connect("w.y", "root.w")
    return s


def composite_mass_properties(d: WeldedPairData) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM (from P, root frame) and inertia at that COM (root frame) of the pair."""
    m = d.m_root + d.m_child
    c_child = d.port + d.P_ab @ d.com_child
    com = (d.m_root * d.com_root + d.m_child * c_child) / m
    inertia = (
        d.I_root
        + d.m_root * _parallel(d.com_root - com)
        + d.P_ab @ d.I_child @ d.P_ab.T
        + d.m_child * _parallel(c_child - com)
    )
    return m, com, 0.5 * (inertia + inertia.T)


def composite_body(d: WeldedPairData) -> System:
    """The welded pair as one RigidBody ``root`` (same reference point, frame, state, wrench)."""
    m, com, inertia = composite_mass_properties(d)
    s = System(f"composite_{d.ratio:g}")
    s.add(
        RigidBody(
            "root", m, inertia, com=com,
            external={"w": {"point": tuple(d.wrench_point), "frame": "body"}},
            gravity=d.gravity, position=d.position, euler=d.euler, twist=d.twist,
        ),
        Constant("w", d.wrench),
    )  # fmt: skip
    s.connect("w.y", "root.w")
    return s


def stability_tree(
    seed: int, *, loads: bool = True, n_bodies: int | None = None
) -> tuple[System, dict[str, str]]:
    """A seeded random tree; returns the system and ``{body: kind}``.

    2-15 bodies (random unless given), each hanging from a random earlier body through a
    revolute (45 %), prismatic (40 %) or welded (15 %) joint with random axis, DCM and port
    offset; masses log-uniform in 0.1-100 kg, full random SPD inertias ``m × (0.05-1 m²)``,
    off-centre COMs. With ``loads``: one random gravity for all blocks, an external wrench on
    the root (and on 20 % of the others), random constant joint efforts or (30 %) a joint
    spring-damper. Without: the same tree (same random draws) with zero gravity, zero efforts
    and no external wrench, so that total momentum is conserved.
    """
    rng = np.random.default_rng(seed)
    if n_bodies is None:
        n_bodies = int(rng.integers(2, 16))
    if not 2 <= n_bodies <= 15:
        raise ValueError("n_bodies must be in 2..15")
    g = random_unit(rng) * (9.81 if loads else 0.0)  # drawn either way: same tree
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n_bodies)]
    kinds = ["root"]
    for _ in range(1, n_bodies):
        u = rng.uniform()
        kinds.append("welded" if u < 0.15 else "revolute" if u < 0.6 else "prismatic")
    if all(k in ("root", "welded") for k in kinds):
        kinds[-1] = "revolute"
    names = ["root"] + [f"b{i}" for i in range(1, n_bodies)]
    children: list[dict[str, np.ndarray]] = [{} for _ in range(n_bodies)]
    for i in range(1, n_bodies):
        children[parents[i]][f"c{i}"] = random_offset(rng, 0.1, 1.0)
    s = System(f"stability_tree_{seed}")
    for i, name in enumerate(names):
        kind = kinds[i]
        mass = float(np.exp(rng.uniform(np.log(0.1), np.log(100.0))))
        inertia = mass * random_inertia(rng)
        common = dict(com=random_offset(rng, 0.05, 0.5), children=children[i] or None, gravity=g)
        has_wrench = kind == "root" or rng.uniform() < 0.2
        w_point = random_offset(rng, 0.0, 0.6)
        w_frame = "body" if rng.uniform() < 0.5 else "inertial"
        wrench = np.concatenate([rng.normal(0, 5, 3), rng.normal(0, 2, 3)])
        if loads and has_wrench:
            common["external"] = {"w": {"point": tuple(w_point), "frame": w_frame}}
            s.add(Constant(f"w_{name}", wrench))
        if kind == "root":
            b = RigidBody(name, mass, inertia, **common)
        elif kind == "revolute":
            axis = random_unit(rng) * rng.uniform(0.5, 2.0)
            b = RevoluteBody(name, mass, inertia, axis=axis, P_a0b=random_rotation(rng), **common)
        elif kind == "prismatic":
            axis = random_unit(rng)
            b = PrismaticBody(name, mass, inertia, axis=axis, P_ab=random_rotation(rng), **common)
        else:
            b = WeldedBody(name, mass, inertia, P_ab=random_rotation(rng), **common)
        s.add(b)
        if loads and has_wrench:
            s.connect(f"w_{name}.y", f"{name}.w")
        if i:
            s.connect(f"{names[parents[i]]}.c{i}", f"{name}.P")
        if kind in ("revolute", "prismatic"):
            spring = rng.uniform() < 0.3
            k, dmp, q_ref = rng.uniform(0.0, 20.0), rng.uniform(0.0, 2.0), rng.uniform(-0.5, 0.5)
            tau = float(rng.normal(0.0, 2.0))
            if loads and spring:
                s.add(JointSpringDamper(f"law_{name}", k=mass * k, d=mass * dmp, q_ref=q_ref))
                s.connect(f"{name}.joint.m", f"law_{name}.m")
                s.connect(f"law_{name}.tau", f"{name}.joint.tau")
            else:
                s.add(Constant(f"tau_{name}", tau if loads else 0.0))
                s.connect(f"tau_{name}.y", f"{name}.joint.tau")
    return s, dict(zip(names, kinds, strict=True))
