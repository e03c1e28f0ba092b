"""MuJoCo's own model of an MJCF file as the reference of the MJCF import's accelerations
(``mj_forward``'s ``qacc``): tests/test_mjcf.py, tests/test_mjcf_gymnasium.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import titopfmu

mujoco = pytest.importorskip("mujoco")


class MuJoCoOf:
    """MuJoCo's model of the file (contacts, limits and fluid forces off) and the map from the
    titopfmu engine state to MuJoCo's (qpos, qvel), joint by joint through the joint names
    (``system.urdf_joints``). MuJoCo's free joint's velocity is the body origin's in the world
    frame (angular: body frame), titopfmu's root RigidBody's both in the body frame: MuJoCo's
    ``qacc[0:3]`` is R (v̇ + ω x v) of titopfmu's; a ball joint's quaternion (w, x, y, z) and
    angular velocity (child frame) are alike in both."""

    def __init__(self, path, system) -> None:
        self.m = mujoco.MjModel.from_xml_path(str(path))
        self.m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        self.m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
        self.m.opt.density, self.m.opt.viscosity = 0.0, 0.0
        self.d = mujoco.MjData(self.m)
        self.engine = titopfmu.Engine(system)
        slices = self.engine.plan.state_slices
        self.joints = []  # (type, qpos adr, dof adr, state slice, range or None)
        in_order = list(system.urdf_joints.values())  # an unnamed joint: by its place
        assert len(in_order) == self.m.njnt
        for i in range(self.m.njnt):
            jnt = self.m.joint(i)
            block = system.urdf_joints[jnt.name] if jnt.name else in_order[i]
            kind = int(self.m.jnt_type[i])
            limited = bool(self.m.jnt_limited[i])
            rng = tuple(self.m.jnt_range[i]) if limited else None
            self.joints.append((kind, int(self.m.jnt_qposadr[i]), int(self.m.jnt_dofadr[i]),
                                slices[block], rng))  # fmt: skip
        assert sum(s.stop - s.start for *_, s, _ in self.joints) == len(
            self.engine.initial_state()
        )

    def random_state(self, rng) -> np.ndarray:
        x = self.engine.initial_state()
        for kind, _, _, sl, lim in self.joints:
            if kind == mujoco.mjtJoint.mjJNT_FREE:
                qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
                x[sl] = np.concatenate([rng.uniform(-1, 1, 3), [qw, qx, qy, qz],
                                        rng.uniform(-1, 1, 6)])  # fmt: skip
            elif kind == mujoco.mjtJoint.mjJNT_BALL:
                qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
                x[sl] = np.concatenate([[qw, qx, qy, qz], rng.uniform(-2, 2, 3)])
            else:  # inside the range: MuJoCo's limit and titopfmu's stops idle
                lo, hi = (-np.pi, np.pi) if lim is None else lim
                x[sl] = [lo + (hi - lo) * rng.uniform(0.02, 0.98), rng.uniform(-2, 2)]
        return x

    def qpos_qvel(self, x):
        qpos, qvel = np.zeros(self.m.nq), np.zeros(self.m.nv)
        for kind, iq, iv, sl, _ in self.joints:
            xs = x[sl]
            if kind == mujoco.mjtJoint.mjJNT_FREE:  # [p, (w, x, y, z), v_body, ω_body]
                R = Rotation.from_quat(xs[[4, 5, 6, 3]]).as_matrix()
                qpos[iq : iq + 7] = xs[0:7]
                qvel[iv : iv + 6] = np.concatenate([R @ xs[7:10], xs[10:13]])
            elif kind == mujoco.mjtJoint.mjJNT_BALL:
                qpos[iq : iq + 4], qvel[iv : iv + 3] = xs[0:4], xs[4:7]
            else:
                qpos[iq], qvel[iv] = xs
        return qpos, qvel

    def accelerations(self, x):
        """(titopfmu's, MuJoCo's) accelerations in MuJoCo's dof order and convention."""
        self.d.qpos[:], self.d.qvel[:] = self.qpos_qvel(x)
        self.d.ctrl[:] = 0.0
        mujoco.mj_forward(self.m, self.d)
        dx = self.engine.derivative(0.0, x)
        ours = np.zeros(self.m.nv)
        for kind, _, iv, sl, _ in self.joints:
            xs, ds = x[sl], dx[sl]
            if kind == mujoco.mjtJoint.mjJNT_FREE:
                R = Rotation.from_quat(xs[[4, 5, 6, 3]]).as_matrix()
                v, w = xs[7:10], xs[10:13]
                ours[iv : iv + 6] = np.concatenate([R @ (ds[7:10] + np.cross(w, v)), ds[10:13]])
            elif kind == mujoco.mjtJoint.mjJNT_BALL:
                ours[iv : iv + 3] = ds[4:7]
            else:
                ours[iv] = ds[1]
        assert self.d.nefc == 0  # no constraint acts: the free dynamics
        return ours, np.array(self.d.qacc)


    def worst_error(self, rng, n: int = 10) -> float:
        """Largest relative gap max |a - a_mujoco| / max(1, max |a_mujoco|) at n random
        states."""
        worst = 0.0
        for _ in range(n):
            ours, theirs = self.accelerations(self.random_state(rng))
            worst = max(worst, np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs))))
        return worst
