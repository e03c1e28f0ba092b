"""Mimic joints (issue 32, point 1): the follower's coordinate q_f = r q_l + offset, enforced in
the core by a constraint effort (titop.h, ``titop_mimic``), checked against Pinocchio's own mimic
model (``buildModelFromUrdf(..., mimic=True)``: its reduced dynamics M(q) a = tau - c(q, v),
Pinocchio 4.1's ``aba`` refusing mimic joints) on panda.urdf's gripper and a 3-link URDF of our
own; the invariant kept over a simulation, energy conserved, exact derivatives, the model FMU,
and every refusal by message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import titopfmu  # noqa: E402
from titopfmu import (  # noqa: E402
    Constant,
    Engine,
    Ground,
    JointMimic,
    PrismaticBody,
    RevoluteBody,
    System,
)
from titopfmu.assembly.system import AssemblyError  # noqa: E402
from titopfmu.urdf import UrdfError, UrdfWarning  # noqa: E402

G = (0.0, 0.0, -9.81)


def erd(name: str) -> str:
    from test_urdf import erd as find

    return find(name)


def link(name: str, m: float, com=(0.1, 0.02, 0.0), i=(0.02, 0.03, 0.025)) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/>'
            f'<mass value="{m}"/><inertia ixx="{i[0]}" iyy="{i[1]}" izz="{i[2]}" ixy="0.001" '
            'ixz="0" iyz="0.002"/></inertial></link>')  # fmt: skip


def joint(name, kind, parent, child, xyz="0.3 0 0", rpy="0.1 0 0.2", axis="0 0 1", extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{extra}'
            '<limit lower="-10" upper="10" effort="1" velocity="1"/></joint>')  # fmt: skip


MIMIC = '<mimic joint="j1" multiplier="-1.7" offset="0.3"/>'


def three_links(mimic: str = MIMIC, kinds=("revolute", "revolute", "prismatic")) -> str:
    """A 3-link arm on a fixed base: j1 (z), j2 (y) mimicking j1 (multiplier -1.7, offset 0.3),
    j3 prismatic along x; no damping; limits at +-10 (rad, m), never reached here."""
    return (
        '<robot name="three">' + link("base", 2.0) + link("l1", 1.0) + link("l2", 0.7)
        + link("l3", 0.4, com=(0.05, 0.0, 0.01))
        + joint("j1", kinds[0], "base", "l1")
        + joint("j2", kinds[1], "l1", "l2", axis="0 1 0", extra=mimic)
        + joint("j3", kinds[2], "l2", "l3", axis="1 0 0", rpy="0 0.3 0")
        + "</robot>"
    )  # fmt: skip


def import_quiet(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        return titopfmu.import_urdf(source, gravity=G)


class Reference:
    """Pinocchio's mimic model of a URDF and the map of its reduced (q, v) onto our states."""

    def __init__(self, model, system: System) -> None:
        self.model, self.data = model, model.createData()
        self.system, self.engine = system, Engine(system)
        # the joints with a coordinate of their own (the leaders and free joints)
        self.own = [(k, n) for k, n in enumerate(model.names) if k and model.joints[k].nv == 1]
        self.slices = {n: self.engine.plan.state_slices[system.urdf_joints[n]]
                       for n in system.urdf_joints}  # fmt: skip

    def state(self, q, v):
        x = self.engine.initial_state()
        for k, n in self.own:
            jm = self.model.joints[k]
            x[self.slices[n]] = [q[jm.idx_q], v[jm.idx_v]]
        return self.engine.consistent(x)  # the followers' from their leaders'

    def accelerations(self, q, v):
        """Pinocchio's a = M^-1 (-damping v - nle) (no aba with mimic joints in 4.1). A new
        Data each time: Pinocchio 4.1's crba on a mimic model, given the Data of an earlier
        call, returns a matrix that depends on that call (seen on this 3-link arm: 12 %)."""
        self.data = self.model.createData()
        M = pin.crba(self.model, self.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        tau = -self.model.damping * v - pin.nonLinearEffects(self.model, self.data, q, v)
        return np.linalg.solve(M, tau)

    def ours(self, dx):
        return np.array([dx[self.slices[n]][1] for _, n in self.own])


def worst_gap(ref: Reference, rng, n: int = 12) -> float:
    worst = 0.0
    for _ in range(n):
        q = pin.randomConfiguration(ref.model)
        v = rng.uniform(-2.0, 2.0, ref.model.nv)
        a = ref.accelerations(q, v)
        got = ref.ours(ref.engine.derivative(0.0, ref.state(q, v)))
        worst = max(worst, np.max(np.abs(got - a)) / max(1.0, np.max(np.abs(a))))
    return worst


def test_the_panda_with_its_gripper_matches_pinocchios_mimic_model():
    """panda.urdf: 9 joint bodies, 8 degrees of freedom as Pinocchio's mimic model; the
    accelerations of the 8 at 12 random states (within the limits: no stop acts) agree."""
    path = erd("panda.urdf")
    system = import_quiet(path)
    model = pin.buildModelFromUrdf(path, mimic=True)
    assert (model.nq, model.nv) == (8, 8)
    mimics = [b for b in system.blocks.values() if isinstance(b, JointMimic)]
    assert [(m.name, m.multiplier, m.offset) for m in mimics] == [
        ("panda_rightfinger_mimic", 1.0, 0.0)
    ]
    ref = Reference(model, system)
    assert len(ref.own) == 8
    worst = worst_gap(ref, np.random.default_rng(3))
    print(f"panda with gripper: worst relative acceleration gap {worst:.3g}")
    assert worst < 1e-10


def test_a_three_link_arm_with_a_mimic_matches_pinocchio_and_keeps_the_relation():
    text = three_links()
    system = import_quiet(text)
    model = pin.buildModelFromXML(text, mimic=True)
    assert model.nv == 2
    ref = Reference(model, system)
    rng = np.random.default_rng(5)
    worst = worst_gap(ref, rng)
    print(f"3-link arm: worst relative acceleration gap {worst:.3g}")
    assert worst < 1e-10
    # the follower's acceleration is r times its leader's, to rounding
    x = ref.state(pin.randomConfiguration(model), rng.uniform(-2, 2, 2))
    dx = ref.engine.derivative(0.0, x)
    s1, s2 = ref.slices["j1"], ref.slices["j2"]
    assert abs(dx[s2][1] + 1.7 * dx[s1][1]) < 1e-12 * max(1.0, abs(dx[s1][1]))


def _arm() -> tuple[System, JointMimic]:
    """The 3-link arm of :func:`three_links` imported: j2 mimics j1."""
    s = import_quiet(three_links())
    mm = next(b for b in s.blocks.values() if isinstance(b, JointMimic))
    return s, mm


def test_a_two_second_simulation_keeps_the_mimic_relation_at_rounding_level():
    s, mm = _arm()
    e = Engine(s)
    j1, j2 = s.urdf_joints["j1"], s.urdf_joints["j2"]
    x0 = e.initial_state()
    x0[e.plan.state_slices[j1]] = [0.4, 1.5]
    x0[e.plan.state_slices[j2]] = [9.0, 9.0]  # inconsistent: the engine projects it
    res = e.simulate(2.0, output_interval=0.01, x0=x0, rtol=1e-10, atol=1e-12,
                     record=[f"{j1}.joint.m[3]", f"{j2}.joint.m[3]", f"{j1}.joint.m[2]",
                             f"{j2}.joint.m[2]"])  # fmt: skip
    q1, q2 = res[f"{j1}.joint.m[3]"], res[f"{j2}.joint.m[3]"]
    v1, v2 = res[f"{j1}.joint.m[2]"], res[f"{j2}.joint.m[2]"]
    gap = np.max(np.abs(q2 - (-1.7 * q1 + 0.3)))
    vgap = np.max(np.abs(v2 + 1.7 * v1))
    print(f"2 s: max |q_f - r q_l - offset| = {gap:.3g}, max |v_f - r v_l| = {vgap:.3g}")
    assert gap < 1e-12 and vgap < 1e-12
    assert np.ptp(q1) > 0.5  # it moves


def test_energy_is_conserved_by_an_undamped_mimic_chain():
    """Kinetic + potential energy (Pinocchio's, on the independent-joint model of the same
    file, at our full state) stays constant over 2 s: the constraint does no work."""
    text = three_links()
    s, _ = _arm()
    e = Engine(s)
    full = pin.buildModelFromXML(text)  # mimic=False: every joint its own coordinate
    data = full.createData()
    x0 = e.initial_state()
    x0[e.plan.state_slices[s.urdf_joints["j1"]]] = [0.2, 2.0]
    x0[e.plan.state_slices[s.urdf_joints["j3"]]] = [0.1, -0.5]
    names = [n for n in full.names[1:]]
    rec = [f"{s.urdf_joints[n]}.joint.m[{k}]" for n in names for k in (3, 2)]
    res = e.simulate(2.0, output_interval=0.02, x0=x0, rtol=1e-11, atol=1e-13, record=rec)
    energy = []
    for i in range(len(res.time)):
        q = np.array([res[f"{s.urdf_joints[n]}.joint.m[3]"][i] for n in names])
        v = np.array([res[f"{s.urdf_joints[n]}.joint.m[2]"][i] for n in names])
        energy.append(pin.computeKineticEnergy(full, data, q, v)
                      + pin.computePotentialEnergy(full, data, q))  # fmt: skip
    energy = np.array(energy)
    drift = np.max(np.abs(energy - energy[0])) / np.max(np.abs(energy))
    print(f"energy drift over 2 s: {drift:.3g} (relative)")
    assert drift < 1e-8
    kinetic0 = pin.computeKineticEnergy(full, data, np.zeros(3), np.zeros(3))
    assert kinetic0 == 0.0


def test_exact_derivatives_match_central_differences():
    s, _ = _arm()
    e = Engine(s)
    rng = np.random.default_rng(2)
    x = e.consistent(e.initial_state() + rng.uniform(-1, 1, e.n_states))
    J = e.jacobian(0.0, x)
    h = 1e-6
    Jfd = np.column_stack([(e.derivative(0.0, x + h * d) - e.derivative(0.0, x - h * d)) / (2 * h)
                           for d in np.eye(e.n_states)])  # fmt: skip
    err = np.max(np.abs(J - Jfd)) / np.max(np.abs(J))
    print(f"complex step vs central differences: {err:.3g}")
    assert err < 1e-7
    # the constraint holds at any state: d(v_f - r v_l)/dt = 0 identically, a zero row
    f, lead = (e.plan.state_slices[s.urdf_joints[n]].start for n in ("j2", "j1"))
    assert np.max(np.abs(J[f + 1] + 1.7 * J[lead + 1])) < 1e-12 * np.max(np.abs(J))


def test_a_mimic_from_blocks_projects_the_follower_and_ties_its_acceleration():
    """The same coupling from blocks: a JointMimic from the leader's joint.m to the follower's
    joint.tau; the follower's initial conditions are replaced by its leader's image."""
    s = System("pair")
    s.add(Ground("g", children={"a": (0, 0, 0)}))
    s.add(RevoluteBody("l", mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]), com=(0.3, 0, 0),
                       axis=(0, 0, 1), theta0=0.5, children={"f": (0.5, 0, 0)}, gravity=G))
    s.add(RevoluteBody("f", mass=0.5, inertia=np.diag([0.05, 0.05, 0.05]), com=(0.2, 0, 0),
                       axis=(0, 0, 1), theta0=3.0, gravity=G))
    s.add(Constant("tl", [1.0]))
    s.add(JointMimic("fm", multiplier=2.0, offset=-0.1))
    s.connect("g.a", "l.P")
    s.connect("l.f", "f.P")
    s.connect("tl.y", "l.joint.tau")
    s.connect("l.joint.m", "fm.m")
    s.connect("fm.tau", "f.joint.tau")
    e = Engine(s)
    x = e.initial_state()
    assert x[e.plan.state_slices["f"]][0] == pytest.approx(2.0 * 0.5 - 0.1)
    dx = e.derivative(0.0, x)
    assert dx[e.plan.state_slices["f"]][1] == pytest.approx(2.0 * dx[e.plan.state_slices["l"]][1],
                                                            rel=1e-13)  # fmt: skip
    assert np.isfinite(dx).all()


def test_the_model_fmu_runs_like_the_engine(tmp_path):
    pytest.importorskip("fmpy")
    from fmpy import simulate_fmu

    s, mm = _arm()
    j1, j2 = s.urdf_joints["j1"], s.urdf_joints["j2"]
    s.blocks[j1].theta0 = 0.3
    cols = [f"{j1}.joint.m[3]", f"{j2}.joint.m[3]", f"{s.urdf_joints['j3']}.joint.m[3]"]
    fmu = titopfmu.export_fmu(s, tmp_path / "arm.fmu", signals=cols, win64=False)
    res = Engine(s).simulate(1.0, output_interval=0.01, record=cols, rtol=1e-11, atol=1e-13)
    ref = np.column_stack([res[c] for c in cols])
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01,
                     output=cols, start_values={"solver.rtol": 1e-11, "solver.atol": 1e-13})
    got = np.column_stack([np.interp(res.time, r["time"], r[c]) for c in cols])
    err = np.max(np.abs(got - ref))
    print(f"model FMU vs engine: {err:.3g}")
    assert err < 1e-9
    assert np.max(np.abs(got[:, 1] - (-1.7 * got[:, 0] + 0.3))) < 1e-12
    assert np.ptp(ref[:, 0]) > 0.1
    # its multiplier is a parameter named by the block
    r2 = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=0.2, output_interval=0.1,
                      output=cols, start_values={f"{mm.name}.multiplier": 0.5,
                                                 f"{mm.name}.offset": 0.0})  # fmt: skip
    assert np.allclose(r2[cols[1]], 0.5 * r2[cols[0]], atol=1e-12)


# -- bad input --------------------------------------------------------------------------------


def _refused(text: str) -> UrdfError:
    with pytest.raises(UrdfError) as e:
        import_quiet(text)
    return e.value


def _line_of_mimic(text: str, nth: int = 0) -> int:
    at = -1
    for _ in range(nth + 1):
        at = text.index("<mimic", at + 1)
    return text[:at].count("\n") + 1


def test_a_mimic_cycle_or_chain_is_refused_naming_the_joint_and_line():
    text = three_links().replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><mimic joint="j2"/>',
                                 1)
    text = text.replace("<robot", "<robot\n")  # a line to name
    e = _refused(text)
    assert "chain or a cycle of mimic joints" in e.reason
    assert e.element in ("joint 'j1'", "joint 'j2'") and e.line == _line_of_mimic(text)
    e = _refused(three_links(mimic='<mimic joint="j2"/>'))
    assert "names itself" in e.reason and e.element == "joint 'j2'"


def test_a_mimic_between_joints_of_different_types_is_refused():
    e = _refused(three_links(mimic='<mimic joint="j3"/>'))
    assert "a prismatic joint, from a revolute joint" in e.reason and e.element == "joint 'j2'"


def test_a_continuous_follower_of_a_revolute_leader_is_accepted():
    """Pinocchio refuses it (its continuous joint's configuration is (cos, sin), not an angle);
    here both are one rotation angle, limits aside: the same dynamics as revolute-revolute."""
    a = Engine(import_quiet(three_links()))
    b = Engine(import_quiet(three_links(kinds=("revolute", "continuous", "prismatic"))))
    x = a.consistent(a.initial_state() + np.random.default_rng(4).uniform(-1, 1, a.n_states))
    assert np.allclose(a.derivative(0.0, x), b.derivative(0.0, x), rtol=1e-13, atol=1e-13)


def test_prismatic_mimics_match_pinocchio():
    text = three_links(mimic='<mimic joint="j1" multiplier="0.6" offset="-0.05"/>',
                       kinds=("prismatic", "prismatic", "revolute"))
    ref = Reference(pin.buildModelFromXML(text, mimic=True), import_quiet(text))
    worst = worst_gap(ref, np.random.default_rng(8))
    print(f"prismatic mimic: worst relative acceleration gap {worst:.3g}")
    assert worst < 1e-10


def test_a_mimic_naming_a_missing_or_fixed_leader_is_refused():
    e = _refused(three_links(mimic='<mimic joint="nope"/>'))
    assert "names joint 'nope', which the file does not have" in e.reason
    e = _refused(three_links(kinds=("fixed", "revolute", "prismatic")))
    assert "a fixed joint: a leader must be revolute, continuous or prismatic" in e.reason
    e = _refused(three_links(mimic='<mimic joint="j1" multiplier="x"/>'))
    assert "<mimic multiplier> 'x' is not a finite number" in e.reason


def test_a_mimic_on_a_fixed_joint_has_no_effect():
    s = import_quiet(three_links(kinds=("revolute", "fixed", "prismatic")))
    assert not [b for b in s.blocks.values() if isinstance(b, JointMimic)]


def test_the_core_refuses_a_mimic_on_joints_of_other_kinds():
    s = System("bad")
    s.add(Ground("g", children={"a": (0, 0, 0)}))
    s.add(RevoluteBody("l", mass=1.0, inertia=np.eye(3) * 0.1, axis=(0, 0, 1),
                       children={"f": (0.5, 0, 0)}))  # fmt: skip
    s.add(PrismaticBody("f", mass=0.5, inertia=np.eye(3) * 0.05, axis=(1, 0, 0)))
    s.add(Constant("tl", [0.0]))
    s.add(JointMimic("fm"))
    for a, b in (("g.a", "l.P"), ("l.f", "f.P"), ("tl.y", "l.joint.tau"), ("l.joint.m", "fm.m"),
                 ("fm.tau", "f.joint.tau")):
        s.connect(a, b)
    with pytest.raises(RuntimeError, match="must be joints of the same kind"):
        Engine(s)


def test_a_mimic_is_refused_by_block_per_fmu_cosimulation():
    from titopfmu.master.from_system import FromSystemError, system_mapping

    s, mm = _arm()
    with pytest.raises(FromSystemError, match=f"block '{mm.name}': a mimic joint.*titopfmu "
                                              "export --fmu"):
        system_mapping(s)


def test_a_mimic_that_is_not_connected_leader_to_follower_is_refused():
    s = System("loose")
    s.add(Ground("g", children={"a": (0, 0, 0)}))
    s.add(RevoluteBody("l", mass=1.0, inertia=np.eye(3) * 0.1, axis=(0, 0, 1)))
    s.add(JointMimic("fm"))
    s.add(Constant("tl", [0.0]))
    s.connect("g.a", "l.P")
    s.connect("tl.y", "l.joint.tau")
    s.connect("l.joint.m", "fm.m")
    with pytest.raises((AssemblyError, titopfmu.TitopError)):
        Engine(s)


def test_a_mimic_is_saved_and_loaded_with_a_model_file():
    from titopfmu.assembly.document import dumps
    from titopfmu.modelfile import loads

    s, mm = _arm()
    text = dumps(s)
    assert "type: JointMimic" in text and "multiplier: -1.7" in text
    s2 = loads(text)
    assert (s2.blocks[mm.name].multiplier, s2.blocks[mm.name].offset) == (-1.7, 0.3)
    e1, e2 = Engine(s), Engine(s2)
    x = e1.consistent(e1.initial_state() + 0.3)
    assert np.array_equal(e1.derivative(0.0, x), e2.derivative(0.0, x))


# -- URDF transmissions: the rotor's inertia reflected on the joint (armature = I_r n^2) ------

TRANSMISSION = (
    '<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>\n'
    '<joint name="{joint}"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>\n'
    '<actuator name="m1"><mechanicalReduction>{n}</mechanicalReduction>'
    "<{tag}>{inertia}</{tag}></actuator></transmission>\n"
)


def with_transmission(joint="j3", n="40", inertia="3e-5", tag="motorInertia", mimic=MIMIC):
    return three_links(mimic=mimic).replace(
        "</robot>", TRANSMISSION.format(joint=joint, n=n, inertia=inertia, tag=tag) + "</robot>"
    )


@pytest.mark.parametrize("tag", ["motorInertia", "rotorInertia"])
def test_a_transmissions_rotor_inertia_is_the_joints_armature(tag):
    """armature = I_r n^2 (the formula: Pinocchio 4.1 does not read transmissions), and the
    accelerations then match Pinocchio's with that armature set (its aba, no mimic here)."""
    text = with_transmission(tag=tag, mimic="")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = titopfmu.import_urdf(text, gravity=G)
    assert not [x for x in w if "transmission" in str(x.message)]  # imported, not listed
    assert s.blocks[s.urdf_joints["j3"]].armature == pytest.approx(3e-5 * 40**2, rel=1e-15)
    model = pin.buildModelFromXML(text)
    model.armature[model.joints[model.getJointId("j3")].idx_v] = 3e-5 * 40**2
    data = model.createData()
    e = Engine(s)
    rng = np.random.default_rng(6)
    worst = 0.0
    for _ in range(10):
        q, v = pin.randomConfiguration(model), rng.uniform(-2, 2, model.nv)
        x = e.initial_state()
        for k, n in enumerate(model.names[1:], start=1):
            jm = model.joints[k]
            x[e.plan.state_slices[s.urdf_joints[n]]] = [q[jm.idx_q], v[jm.idx_v]]
        a = pin.aba(model, data, q, v, np.zeros(model.nv))
        dx = e.derivative(0.0, x)
        got = [dx[e.plan.state_slices[s.urdf_joints[n]]][1] for n in model.names[1:]]
        worst = max(worst, np.max(np.abs(np.array(got) - a)) / max(1.0, np.max(np.abs(a))))
    print(f"armature from a transmission: worst relative acceleration gap {worst:.3g}")
    assert worst < 1e-10


def test_a_rotor_on_a_mimic_leader_counts_in_the_reduced_dynamics():
    """A rotor on the leader of a mimic: Pinocchio's mimic model with that armature."""
    text = with_transmission(joint="j1", n="10", inertia="2e-4")
    s = import_quiet(text)
    model = pin.buildModelFromXML(text, mimic=True)
    model.armature[model.joints[model.getJointId("j1")].idx_v] = 2e-4 * 100
    ref = Reference(model, s)
    worst = worst_gap(ref, np.random.default_rng(9))
    assert worst < 1e-10


def test_bad_transmissions_are_refused_or_listed():
    e = _refused(with_transmission(inertia="-1"))
    assert "<motorInertia> -1 is negative" in e.reason and e.element == "transmission 't1'"
    e = _refused(with_transmission(joint="nope"))
    assert "names joint 'nope', which the file does not have" in e.reason
    # a transmission without a rotor inertia changes nothing and stays listed
    plain = three_links().replace("</robot>", '<transmission name="t"><joint name="j1"/>'
                                  "</transmission></robot>")  # fmt: skip
    with pytest.warns(UrdfWarning, match=r"<transmission> \(actuator description"):
        titopfmu.import_urdf(plain, gravity=G)


def test_linearisation_works_on_the_full_state():
    """A of the full state: the relation's directions give a double zero eigenvalue (a Jordan
    block: d(q_f - r q_l)/dt = v_f - r v_l, d(v_f - r v_l)/dt = 0)."""
    s, _ = _arm()
    e = Engine(s)
    A = titopfmu.linearize(e).A
    f, lead = (e.plan.state_slices[s.urdf_joints[n]].start for n in ("j2", "j1"))
    scale = np.max(np.abs(A))
    assert np.max(np.abs(A[f + 1] + 1.7 * A[lead + 1])) < 1e-12 * scale
    w = np.zeros(e.n_states)
    w[f + 1], w[lead + 1] = 1.0, 1.7
    assert np.allclose(A[f] + 1.7 * A[lead], w, atol=1e-12 * scale)
    assert np.sum(np.abs(np.linalg.eigvals(A)) < 1e-6) == 2
