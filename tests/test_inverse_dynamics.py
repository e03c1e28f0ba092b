"""Forward and inverse dynamics agree at system level (Fig. 1 vs Figs. 2-12): the accelerations the
forward model produces, imposed on the inverse-dynamics blocks, give back the efforts and external
wrench that were applied."""

import numpy as np

from titopfmu import (
    Constant,
    Engine,
    ImposedMotionBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    System,
)

G = [0.3, -9.81, 0.2]


def spd(rng, scale=1.0):
    """A physical inertia tensor: that of a random cloud of point masses about its centroid."""
    r = rng.normal(size=(8, 3))
    r -= r.mean(axis=0)
    return scale * sum(np.dot(p, p) * np.eye(3) - np.outer(p, p) for p in r)


def test_inverse_chain_recovers_forward_efforts():
    rng = np.random.default_rng(7)
    I0, I1, I2 = spd(rng), spd(rng, 0.3), spd(rng, 0.2)
    ext = np.array([1.0, -2.0, 0.5, 0.3, -0.1, 0.2])
    tau1, tau2 = 0.7, -3.0
    fwd = System()
    fwd.add(
        RigidBody(
            "root", 4.0, I0, com=[0.1, 0.2, -0.1], children={"C": [0.3, -0.5, 0.2]},
            external={"push": {"point": [0.1, 0.0, 0.4], "frame": "inertial"}}, gravity=G,
            position=[1, 2, 3], euler=[0.3, -0.4, 1.2], twist=rng.normal(size=6),
        ),
        RevoluteBody(
            "arm", 2.0, I1, com=[0.0, -0.4, 0.1], axis=[0.2, 0.1, 1.0], theta0=0.4,
            theta_dot0=0.8, children={"T": [0.1, -0.9, 0.0]}, gravity=G,
            P_a0b=np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]]),
        ),
        PrismaticBody("slide", 1.5, I2, com=[0.2, 0.0, 0.0], axis=[1, 0.3, 0], x0=0.2,
                      x_dot0=-0.4, gravity=G),
        Constant("push", ext), Constant("tau1", tau1), Constant("tau2", tau2),
    )  # fmt: skip
    fwd.connect("root.C", "arm.P")
    fwd.connect("arm.T", "slide.P")
    fwd.connect("push.y", "root.push")
    fwd.connect("tau1.y", "arm.joint.tau")
    fwd.connect("tau2.y", "slide.joint.tau")
    ef = Engine(fwd)
    evf = ef.evaluate(0.0, ef.initial_state())
    m_root = ef.signal(evf, "root.m")  # motion vector at the root's reference point
    m_arm = ef.signal(evf, "arm.joint.m")
    m_slide = ef.signal(evf, "slide.joint.m")

    inv = System()
    root = fwd.blocks["root"]
    inv.add(
        ImposedMotionBody("root", root.mass, root.inertia, com=root.com,
                          children={"C": [0.3, -0.5, 0.2]}, gravity=G),
        RevoluteBodyInverse("arm", 2.0, I1, com=[0.0, -0.4, 0.1], axis=[0.2, 0.1, 1.0],
                            children={"T": [0.1, -0.9, 0.0]}, gravity=G,
                            P_a0b=np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])),
        PrismaticBodyInverse("slide", 1.5, I2, com=[0.2, 0.0, 0.0], axis=[1, 0.3, 0], gravity=G),
        Constant("m_root", m_root), Constant("m_arm", m_arm), Constant("m_slide", m_slide),
    )  # fmt: skip
    inv.connect("root.C", "arm.P")
    inv.connect("arm.T", "slide.P")
    inv.connect("m_root.y", "root.m")
    inv.connect("m_arm.y", "arm.joint.m")
    inv.connect("m_slide.y", "slide.joint.m")
    ei = Engine(inv)
    assert ei.n_states == 0
    evi = ei.evaluate(0.0, ei.initial_state())
    np.testing.assert_allclose(ei.signal(evi, "arm.joint.tau"), [tau1], atol=1e-10)
    np.testing.assert_allclose(ei.signal(evi, "slide.joint.tau"), [tau2], atol=1e-10)
    # required wrench at the root = the applied push, moved to P and into the body frame
    R = evf.kin["root"].R
    f_b = R.T @ ext[0:3]
    t_b = R.T @ ext[3:6] + np.cross([0.1, 0.0, 0.4], f_b)
    np.testing.assert_allclose(ei.signal(evi, "root.W"), np.concatenate([f_b, t_b]), atol=1e-10)
    # and the motions at every port match
    for port in ("root.C.m", "arm.T.m"):
        np.testing.assert_allclose(ei.signal(evi, port), ef.signal(evf, port), atol=1e-10)
