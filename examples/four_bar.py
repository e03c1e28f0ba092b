"""A closed chain: a four-bar linkage cut at one pin and closed by a LoopClosure block.

python examples/four_bar.py [--t-final 5] [--stiffness 1e5] [--plot results/four_bar.png]

A parallelogram four-bar in the vertical x-y plane (gravity -y): crank (1 m) and rocker (1 m) on
pins of a fixed base 2 m apart, joined by a 2 m coupler. TITOP blocks form trees, so the chain
is cut at the coupler-rocker pin C: the crank, the coupler and the rocker are ``RevoluteBody``
blocks of a tree rooted at the ``Ground``, and a ``LoopClosure`` block joins the two sides of
the cut with a stiff 6x6 spring-damper that holds the three translations and the two
out-of-plane rotations (the in-plane rotation is the pin's free axis). A damper on the crank
(``JointSpringDamper``) lets the mechanism settle. Released with the crank at -30° (60° from
hanging straight down) it swings about -90°, away from the aligned positions 0° and 180° where
a parallelogram can fold into another branch. A parallelogram keeps the rocker parallel to the
crank and the coupler level, which the summary checks along with the gap at the cut (it
shrinks as the stiffness grows).
"""

from __future__ import annotations

import argparse

import numpy as np

from titopfmu import Constant, Engine, Ground, JointSpringDamper, LoopClosure, RevoluteBody, System
from titopfmu.spatial import dcm_from_euler

G = [0.0, -9.81, 0.0]


def rod(length: float, mass: float = 1.0) -> dict:
    """Thin rod along x from its joint: mass, inertia at the centre of mass, centre of mass."""
    j = mass * length**2 / 12.0
    return {"mass": mass, "inertia": np.diag([1e-4, j, j]), "com": [length / 2, 0.0, 0.0]}


def four_bar(stiffness: float = 1e5, theta: float = np.deg2rad(-30.0)) -> System:
    k, d = stiffness, 2.0 * np.sqrt(stiffness)
    s = System("four_bar")
    s.add(
        Ground("ground", children={"A": [0.0, 0.0, 0.0], "D": [2.0, 0.0, 0.0]}),
        RevoluteBody("crank", **rod(1.0), theta0=theta, children={"B": [1.0, 0, 0]}, gravity=G),
        RevoluteBody("coupler", **rod(2.0), theta0=-theta, children={"C": [2.0, 0, 0]}, gravity=G),
        RevoluteBody("rocker", **rod(1.0), theta0=theta, children={"C": [1.0, 0, 0]}, gravity=G),
        LoopClosure("pin_C", K=np.diag([k, k, k, k, k, 0.0]), D=np.diag([d, d, d, d, d, 0.0])),
        JointSpringDamper("crank_damper", d=2.0),
        Constant("free", 0.0),
    )  # fmt: skip
    s.connect("ground.A", "crank.P")
    s.connect("crank.B", "coupler.P")
    s.connect("ground.D", "rocker.P")
    s.connect("coupler.C", "pin_C.left")  # the two sides of the cut
    s.connect("rocker.C", "pin_C.right")
    s.connect("crank.joint.m", "crank_damper.m")
    s.connect("crank_damper.tau", "crank.joint.tau")
    for joint in ("coupler", "rocker"):
        s.connect("free.y", f"{joint}.joint.tau")
    return s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-final", type=float, default=5.0, help="simulated time (s)")
    ap.add_argument("--stiffness", type=float, default=1e5, help="closure stiffness (N/m)")
    ap.add_argument("--plot", help="image file for the three joint angles")
    args = ap.parse_args(argv)

    record = {j: f"{j}.joint.m[3]" for j in ("crank", "coupler", "rocker")}
    record.update({"left": "coupler.C.m", "right": "rocker.C.m"})
    r = Engine(four_bar(args.stiffness)).simulate(
        args.t_final, output_interval=0.01, record=record, rtol=1e-9, atol=1e-11
    )
    gap = 0.0
    for row in range(len(r.time)):  # inertial position of each side: P_{frame/i} [IC]_frame
        pos = [dcm_from_euler(m[15:18]) @ m[12:15]
               for m in (np.array([r[f"{side}[{i}]"][row] for i in range(1, 19)])
                         for side in ("left", "right"))]  # fmt: skip
        gap = max(gap, float(np.linalg.norm(pos[0] - pos[1])))
    print(
        f"four-bar closed by a LoopClosure (k = {args.stiffness:g}), {args.t_final:g} s simulated"
    )
    print(f"crank angle        {np.rad2deg(r['crank'][0]):.1f} -> {np.rad2deg(r['crank'][-1]):.1f}"
          f" deg (range {np.rad2deg(np.ptp(r['crank'])):.1f} deg)")  # fmt: skip
    print(f"rocker - crank     max {np.max(np.abs(r['rocker'] - r['crank'])):.2e} rad (parallel)")
    print(f"coupler tilt       max {np.max(np.abs(r['crank'] + r['coupler'])):.2e} rad (level)")
    print(f"gap at the cut     max {gap:.2e} m")
    if args.plot:
        from titopfmu.plotting import plot_result

        plot_result(r, args.plot, columns=["crank", "coupler", "rocker"], ncols=1,
                    units=dict.fromkeys(("crank", "coupler", "rocker"), "rad"),
                    title="Four-bar linkage closed by a LoopClosure block")  # fmt: skip
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
