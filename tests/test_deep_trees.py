"""Assembly of long chains must not recurse per body (Python's stack) nor cost quadratic time."""

import numpy as np

from titopfmu import Constant, Engine, RevoluteBody, RigidBody, System


def test_chain_of_3000_bodies_assembles_and_evaluates():
    n = 3000
    s = System()
    s.add(RigidBody("root", 1.0, np.eye(3), children={"C": [0, -1, 0]}), Constant("zero", 0.0))
    parent = "root.C"
    for k in range(n):
        s.add(
            RevoluteBody(
                f"b{k}", 1.0, 0.01 * np.eye(3), com=[0, -0.5, 0], theta0=0.1,
                children=None if k == n - 1 else {"C": [0, -1, 0]},
            )
        )  # fmt: skip
        s.connect(parent, f"b{k}.P")
        s.connect("zero.y", f"b{k}.joint.tau")
        parent = f"b{k}.C"
    engine = Engine(s)
    assert engine.plan.tree[0] == "root" and engine.plan.tree[-1] == f"b{n - 1}"
    dx = engine.derivative(0.0, engine.initial_state())
    assert np.all(np.isfinite(dx))
