"""Invariants of the in-process engine: energy without dissipation, centre of mass without net
external force. Expected values come from physics, not from earlier runs."""

import warnings

import numpy as np
import pytest

from titopfmu import Constant, Engine, Ground, RevoluteBody, System
from titopfmu.examples.balloon import BalloonParameters, build_balloon

BODIES = ("balloon", "slider", "pend1", "pend2")


@pytest.fixture(autouse=True)
def _no_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _energy(result, bodies):
    ke = sum(result[f"{b}.kinetic_energy"] for b in bodies)
    pe = sum(result[f"{b}.potential_energy"] for b in bodies)
    return ke, ke + pe


def test_energy_conserved_balloon_without_dissipation():
    """Damping, spring and buoyancy removed: kinetic + gravity energy is constant over 10 s."""
    engine = Engine(build_balloon(BalloonParameters().conservative()))
    rec = [f"{b}.{e}" for b in BODIES for e in ("kinetic_energy", "potential_energy")]
    r = engine.simulate(10.0, output_interval=0.05, record=rec, rtol=1e-12, atol=1e-12)
    ke, e = _energy(r, BODIES)
    assert ke.max() > 1e3  # the system falls and the pendulums swing: energy is exchanged
    drift = np.abs(e - e[0]).max() / ke.max()
    assert drift < 1e-8, drift


def test_energy_conserved_fixed_base_triple_pendulum():
    """A bounded conservative system: triple pendulum with full inertias on a fixed base."""
    rng = np.random.default_rng(3)
    s = System()
    s.add(Ground("base", children={"O": [0, 0, 0]}), Constant("zero", 0.0))
    parent = "base.O"
    names = [f"link{k}" for k in range(3)]
    for k, name in enumerate(names):
        a = rng.normal(size=(3, 3))
        last = k == len(names) - 1
        s.add(
            RevoluteBody(
                name,
                1.0 + k,
                a @ a.T * 0.05 + 0.01 * np.eye(3),
                com=[0.3, -0.4, 0.1 * k],
                axis=rng.normal(size=3),
                theta0=rng.uniform(-2, 2),
                theta_dot0=rng.uniform(-1, 1),
                children=None if last else {"tip": [0.2, -0.8, 0.05]},
                gravity=[0, -9.81, 0],
            )
        )
        s.connect(parent, f"{name}.P")
        s.connect("zero.y", f"{name}.joint.tau")
        parent = f"{name}.tip"
    engine = Engine(s)
    rec = [f"{n}.{e}" for n in names for e in ("kinetic_energy", "potential_energy")]
    r = engine.simulate(10.0, output_interval=0.05, record=rec, rtol=1e-12, atol=1e-12)
    ke, e = _energy(r, names)
    assert ke.max() > 0.1
    drift = np.abs(e - e[0]).max() / ke.max()
    assert drift < 1e-8, drift


def test_centre_of_mass_fixed_without_net_external_force():
    """Buoyancy -m_G g cancels gravity: the system's centre of mass stays where it started, and
    its linear momentum stays zero, while the bodies move by metres."""
    p = BalloonParameters()
    engine = Engine(build_balloon(p))
    masses = {"balloon": p.m_balloon, "slider": p.m_slider, "pend1": p.m_p1, "pend2": p.m_p2}
    rec = [f"{b}.{s}" for b in BODIES for s in ("com", "momentum")]
    r = engine.simulate(20.0, output_interval=0.1, record=rec, rtol=1e-10, atol=1e-12)
    com = (
        sum(masses[b] * np.stack([r[f"{b}.com[{i}]"] for i in (1, 2, 3)], axis=1) for b in BODIES)
        / p.total_mass
    )
    pend2 = np.stack([r[f"pend2.com[{i}]"] for i in (1, 2, 3)], axis=1)
    assert np.abs(pend2 - pend2[0]).max() > 1.0  # things do move
    assert np.abs(com - com[0]).max() < 1e-8
    momentum = sum(np.stack([r[f"{b}.momentum[{i}]"] for i in (1, 2, 3)], axis=1) for b in BODIES)
    assert np.abs(momentum).max() < 1e-8
