"""A spacecraft hub with two flexible solar arrays slewing about its roll axis.

python examples/flexible_spacecraft.py [--t-final 40] [--plot results/flexible_spacecraft.png]

A free-floating rigid hub (``RigidBody``, 600 kg) carries two solar arrays on revolute drives
(``RevoluteBody`` about each array's long axis, held by a stiff ``JointSpringDamper``). Each
array is a flexible body (``flexible=``: a 6 m uniform panel modelled as a beam of 40 finite
elements, reduced to its 6 lowest cantilever modes, 0.5 % modal damping; docs/flexible.md).
No gravity. A torque about the hub's x axis performs a 20 degree roll slew in 20 s, shaped for
the spacecraft as if it were rigid (cycloidal profile: the torque is I_xx times the profile's
acceleration, I_xx that of hub + arrays undeformed). The arrays bend out of their plane, and
the hub's roll departs from the rigid profile: the attitude error this example prints and plots
with the arrays' tip deflections.
"""

from __future__ import annotations

import argparse

import numpy as np

from titopfmu import Engine, JointSpringDamper, RevoluteBody, RigidBody, System, TimeFunction
from titopfmu.spatial.algebra import kinematic_model

NO_GRAVITY = [0.0, 0.0, 0.0]
#: the arrays' flexible part: a 6 m x 1 m x 10 mm panel (20 kg) as a beam along x_a
ARRAY = {
    "beam": {"length": 6.0, "E": 70e9, "rho": 333.3, "nu": 0.3,
             "section": {"rectangle": [1.0, 0.01]}, "n_elements": 40},
    "modes": 6, "damping": 0.005, "nodes": ["tip"],
}  # fmt: skip
SLEW = np.radians(20.0)  # rad
DURATION = 20.0  # s


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rigid_roll_inertia(system: System) -> float:
    """I_xx (kg m²) about the hub's origin of hub + undeformed arrays: each array's rigid 6 x 6
    mass matrix at its P (its reduced model's M(0), docs/flexible.md eq. 5) turned to the hub's
    axes and moved to the hub's origin, D_O = τ_PO^T D_P τ_PO (eq. 4), added to the hub's D."""
    hub = system.blocks["hub"]
    total = hub.D[3, 3]
    for side in ("left", "right"):
        arr = system.blocks[f"{side}_array"]
        red = arr.flexible
        R6 = np.kron(np.eye(2), arr.joint.R_a0b)  # array frame -> hub frame, both halves
        D_P = R6 @ red.mass_matrix(np.zeros(red.n_modes))[:6, :6] @ R6.T
        tau = kinematic_model(-np.asarray(hub.child_points[hub.child_names.index(side)]))
        total += (tau.T @ D_P @ tau)[3, 3]
    return float(total)


def roll_profile(t: float, inertia: float) -> tuple[float, float]:
    """The rigid cycloidal slew: roll angle (rad) and the torque (N m) producing it."""
    if t >= DURATION:
        return SLEW, 0.0
    w = 2 * np.pi / DURATION
    angle = SLEW * (t / DURATION - np.sin(w * t) / (2 * np.pi))
    return angle, inertia * SLEW * w / DURATION * np.sin(w * t)


def spacecraft() -> System:
    """Hub (600 kg, 1.2 m cube) + two arrays on drives at y = ±1 m, along ±y."""
    s = System("flexible_spacecraft")
    s.add(RigidBody("hub", 600.0, np.diag([150.0, 150.0, 150.0]), gravity=NO_GRAVITY,
                    children={"left": [0.0, 1.0, 0.0], "right": [0.0, -1.0, 0.0]},
                    external={"torque": {"point": [0.0, 0.0, 0.0], "frame": "body"}}))
    for side, angle in (("left", np.pi / 2), ("right", -np.pi / 2)):
        s.add(RevoluteBody(f"{side}_array", 0.0, np.zeros((3, 3)), axis=[1.0, 0.0, 0.0],
                           P_a0b=rot_z(angle), flexible=ARRAY, gravity=NO_GRAVITY),
              JointSpringDamper(f"{side}_drive", k=2.0e4, d=400.0))  # fmt: skip
        s.connect(f"hub.{side}", f"{side}_array.P")
        s.connect(f"{side}_array.joint.m", f"{side}_drive.m")
        s.connect(f"{side}_drive.tau", f"{side}_array.joint.tau")
    inertia = rigid_roll_inertia(s)
    s.add(TimeFunction("torque", lambda t: [0.0, 0.0, 0.0, roll_profile(t, inertia)[1], 0.0,
                                            0.0], 6))  # fmt: skip
    s.connect("torque.y", "hub.torque")
    return s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-final", type=float, default=40.0, help="simulated time (s)")
    ap.add_argument("--plot", help="image file for the tip deflections and the attitude error")
    args = ap.parse_args(argv)

    system = spacecraft()
    engine = Engine(system)
    red = system.blocks["left_array"].flexible
    modes = [f"q.{c}" for c in red.coordinates]
    record = {"roll": "hub.euler[1]"}
    for side in ("left", "right"):
        record.update({f"{side}.{m}": f"{side}_array.state.{m}" for m in modes})
    r = engine.simulate(args.t_final, output_interval=0.05, record=record, rtol=1e-9, atol=1e-12)
    inertia = rigid_roll_inertia(system)
    reference = np.array([roll_profile(t, inertia)[0] for t in r.time])
    error = r["roll"] - reference
    tip = red.node_shapes[1][2]  # the tip node's z translation per elastic coordinate (m)
    deflection = {side: np.column_stack([r[f"{side}.{m}"] for m in modes]) @ tip
                  for side in ("left", "right")}  # fmt: skip
    print(f"flexible spacecraft: hub + 2 arrays (first cantilever mode "
          f"{red.frequencies()[0] / (2 * np.pi):.3f} Hz), {SLEW * 180 / np.pi:g} deg roll slew "
          f"in {DURATION:g} s, {args.t_final:g} s simulated")  # fmt: skip
    for side in ("left", "right"):
        print(f"{side:5s} array tip deflection: max |w| {np.max(np.abs(deflection[side])):.3e} m")
    print(f"hub roll: {np.degrees(r['roll'][-1]):.4f} deg at the end; attitude error vs the "
          f"rigid profile: max {np.degrees(np.max(np.abs(error))):.3e} deg")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
        for side in ("left", "right"):
            ax[0].plot(r.time, 1e3 * deflection[side], label=f"{side} array")
        ax[0].set_ylabel("tip deflection (mm)")
        ax[0].legend()
        ax[1].plot(r.time, np.degrees(error) * 3600.0)
        ax[1].set_ylabel("roll error vs rigid (arcsec)")
        ax[1].set_xlabel("time (s)")
        fig.suptitle("Hub with two flexible arrays: 20 deg roll slew")
        fig.tight_layout()
        fig.savefig(args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
