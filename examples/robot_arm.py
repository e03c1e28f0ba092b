"""A three-link robot arm under gravity with a PD law on each joint, built from TITOP blocks.

python examples/robot_arm.py [--t-final 5] [--plot results/robot_arm.png]

A fixed base (``Ground``) carries a column turning about the vertical z axis (the waist), a
0.8 m upper arm on a shoulder about y, and a 0.6 m forearm on an elbow about y, all
``RevoluteBody`` blocks under gravity g = [0, 0, -9.81] m/s². Each joint has a PD law
``tau = -k (q - q_ref) - d q̇`` (``JointSpringDamper``) driving it from the stretched-out start
(all angles 0) to its reference. A PD law without gravity compensation settles with a
steady-state error: the shoulder and the elbow sag by about their gravity torque over k.
Prints the final joint angles against the references and the torques that hold the arm.
"""

from __future__ import annotations

import argparse

import numpy as np

from titopfmu import Engine, Ground, JointSpringDamper, RevoluteBody, System

G = [0.0, 0.0, -9.81]
#: joint -> (axis, reference angle (rad), stiffness k (N m/rad), damping d (N m s/rad))
JOINTS = {
    "waist": ((0.0, 0.0, 1.0), 0.8, 200.0, 60.0),
    "shoulder": ((0.0, 1.0, 0.0), -0.5, 400.0, 60.0),
    "elbow": ((0.0, 1.0, 0.0), 0.9, 150.0, 15.0),
}


def rod(mass: float, length: float, along: int) -> dict:
    """A thin rod from the joint along axis ``along`` (0 x, 2 z): mass, inertia at its centre of
    mass and the vector to it."""
    j = mass * length**2 / 12.0
    inertia = np.full(3, j)
    inertia[along] = 1e-3 * j
    com = np.zeros(3)
    com[along] = length / 2.0
    return {"mass": mass, "inertia": np.diag(inertia), "com": com}


def robot_arm() -> System:
    s = System("robot_arm")
    s.add(
        Ground("base", children={"mount": [0.0, 0.0, 0.0]}),
        RevoluteBody("waist", **rod(8.0, 0.4, along=2), axis=JOINTS["waist"][0],
                     children={"top": [0.0, 0.0, 0.4]}, gravity=G),
        RevoluteBody("shoulder", **rod(4.0, 0.8, along=0), axis=JOINTS["shoulder"][0],
                     children={"end": [0.8, 0.0, 0.0]}, gravity=G),
        RevoluteBody("elbow", **rod(2.0, 0.6, along=0), axis=JOINTS["elbow"][0], gravity=G),
    )  # fmt: skip
    s.connect("base.mount", "waist.P")
    s.connect("waist.top", "shoulder.P")
    s.connect("shoulder.end", "elbow.P")
    for joint, (_, q_ref, k, d) in JOINTS.items():
        s.add(JointSpringDamper(f"{joint}_pd", k=k, d=d, q_ref=q_ref))
        s.connect(f"{joint}.joint.m", f"{joint}_pd.m")
        s.connect(f"{joint}_pd.tau", f"{joint}.joint.tau")
    return s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-final", type=float, default=5.0, help="simulated time (s)")
    ap.add_argument("--plot", help="image file for the joint angles")
    args = ap.parse_args(argv)

    record = {j: f"{j}.joint.m[3]" for j in JOINTS}
    record.update({f"tau_{j}": f"{j}.joint.tau" for j in JOINTS})
    r = Engine(robot_arm()).simulate(args.t_final, output_interval=0.01, record=record)
    print(f"robot arm: 3 revolute joints under gravity, PD laws, {args.t_final:g} s simulated")
    print(f"{'joint':9s} {'q_ref':>8s} {'q(end)':>9s} {'error':>9s} {'torque':>9s}")
    for j, (_, q_ref, _, _) in JOINTS.items():
        q, tau = r[j][-1], r[f"tau_{j}"][-1]
        print(f"{j:9s} {q_ref:8.3f} {q:9.4f} {q - q_ref:+9.4f} {tau:+9.3f}")
    print("(rad, N m; a PD law without gravity compensation keeps the gravity torque / k error)")
    if args.plot:
        from titopfmu.plotting import plot_result

        plot_result(r, args.plot, columns=list(JOINTS), units=dict.fromkeys(JOINTS, "rad"),
                    ncols=1, title="Three-link arm under PD control")  # fmt: skip
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
