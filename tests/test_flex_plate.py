"""The plate (titopfmu.flex.Plate, scikit-fem): cantilever frequencies against the classical
thin-plate table, mesh convergence, the reduced model's rigid-body invariants against closed
forms, geometric stiffness (a spinning strip against the rotating-beam table), bad input and
the file round trip (docs/flexible.md, section 11)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg

from titopfmu.flex import (
    FlexModelError,
    Plate,
    cantilever_modes,
    craig_bampton,
    read_fe_model,
    write_fe_model,
)

# Aluminium panel, 1 m square, 10 mm thick (h / a = 0.01: a thin plate)
A_, H_, E_, RHO_, NU_ = 1.0, 0.01, 70e9, 2700.0, 0.3

# Square cantilever plate (one edge clamped, three free), nu = 0.3, classical thin-plate
# theory: lambda = omega a^2 sqrt(rho h / D), modes 1-5. Leissa, "Vibration of Plates", NASA
# SP-160 (1969), from Barton, J. Appl. Mech. 18, 1951; the same values are Code_Aster's
# benchmark SDLS01 (V2.03.001, "plate embedded on one side": 3.492, 8.525, 21.43, 27.33, 31.11)
# and, to 4 digits, Leissa's 36-term Ritz solution (J. Sound Vib. 31(3), 1973): 3.4917, 8.5246,
# 21.429, 27.331, 31.111. Ritz with beam functions bounds from above: the finite-element
# values converge 0.5-0.8 % below them (the 2 x 2 / 3 x 3 selective Mindlin element).
LEISSA = np.array([3.492, 8.525, 21.43, 27.33, 31.11])


def _lam(plate: Plate, n: int = 5) -> np.ndarray:
    """The first n cantilever frequency parameters of the plate's model clamped at P (its
    sparse matrices, shift-invert Lanczos)."""
    K, M = plate.sparse_matrices()
    K, M = K[6:, 6:].tocsc(), M[6:, 6:].tocsc()  # P (node 0) clamped
    w2 = np.sort(scipy.sparse.linalg.eigsh(K, n, M, sigma=0.0, which="LM")[0])
    return np.sqrt(w2) * plate.a**2 * np.sqrt(plate.rho * plate.thickness / plate.flexural_rigidity)


@pytest.fixture(scope="module")
def panel() -> Plate:
    return Plate("panel", A_, A_, H_, E_, RHO_, NU_)  # default mesh: 6 x 6 ElementQuad2


def test_cantilever_square_plate_leissa(panel: Plate) -> None:
    fe = panel.fe_model()
    red = cantilever_modes(fe, 5)
    lam = red.frequencies() * A_**2 * np.sqrt(RHO_ * H_ / panel.flexural_rigidity)
    err = lam / LEISSA - 1.0
    assert np.all(np.abs(err) < 1e-2), err
    # the reduced model's frequencies are the sparse matrices' (cantilever modes)
    assert np.allclose(lam, _lam(panel), rtol=1e-8)
    K, M = panel.sparse_matrices()
    assert np.allclose(K.toarray(), fe.K, rtol=0, atol=1e-12 * np.abs(fe.K).max())
    assert np.allclose(M.toarray(), fe.M, rtol=0, atol=1e-12 * np.abs(fe.M).max())


def test_cantilever_plate_converges(panel: Plate) -> None:
    lams = [_lam(Plate("panel", A_, A_, H_, E_, RHO_, NU_, nx=n, ny=n)) for n in (2, 4)]
    lams.append(_lam(panel))  # 6 x 6
    d1 = np.abs(lams[1] - lams[0])
    d2 = np.abs(lams[2] - lams[1])
    assert np.all(d2 < 0.5 * d1), (d1, d2)
    # the 4-node element (1-point shear) converges to the same values
    q1 = _lam(Plate("panel", A_, A_, H_, E_, RHO_, NU_, nx=16, ny=16, element="quad1"))
    q1c = _lam(Plate("panel", A_, A_, H_, E_, RHO_, NU_, nx=8, ny=8, element="quad1"))
    assert np.all(np.abs(q1 - lams[2]) < np.abs(q1c - lams[2]))
    assert np.all(np.abs(q1 / lams[2] - 1.0) < 1e-2)


def test_invariants_closed_form() -> None:
    a, b, h, rho = 1.2, 0.8, 0.02, 2000.0
    plate = Plate("panel", a, b, h, 70e9, rho, 0.3, nx=3, ny=2)
    red = cantilever_modes(plate.fe_model(geometric_stiffness=False), 4)
    m = rho * a * b * h
    assert red.mass == pytest.approx(m, rel=1e-12)
    assert np.allclose(red.first_moment, [m * a / 2, 0.0, 0.0], rtol=0, atol=1e-12 * m * a)
    # the solid panel's inertia about P = the middle of the clamped edge, x in [0, a],
    # y in [-b/2, b/2], z in [-h/2, h/2]; J_zz + m h^2 / 12: the drilling rotary inertia
    J = m * np.diag([(b * b + h * h) / 12, a * a / 3 + h * h / 12, a * a / 3 + b * b / 12])
    J[2, 2] += m * h * h / 12
    assert np.allclose(red.inertia, J, rtol=0, atol=1e-12 * np.max(J))
    assert np.allclose(plate.fe_model(False).node_positions[0], 0.0)


def test_spinning_strip_geometric_stiffness() -> None:
    # a narrow strip (nu = 0: no anticlastic coupling) is a beam: its flap frequencies spinning
    # about z follow the rotating-beam table (Wright et al. 1982, docs section 10)
    a, b, h, E, rho = 1.0, 0.04, 0.004, 70e9, 2700.0
    strip = Plate("strip", a, b, h, E, rho, 0.0, nx=16, ny=1)
    fe = strip.fe_model()
    s = np.sqrt(E * b * h**3 / 12 / (rho * b * h * a**4))
    free = fe.free_dofs()
    K, M = fe.K[np.ix_(free, free)], fe.M[np.ix_(free, free)]
    KG = fe.kg("wzz")[np.ix_(free, free)]
    # (Omega bar, first flap, second flap); the second flap is the full model's 2nd or 3rd
    # mode (the strip's first torsion mode, 35.13, is unstiffened)
    table = ((0, 3.5160, 22.0345), (4, 5.5850, 24.2734), (8, 9.2568, 29.9954),
             (12, 13.1702, 37.6031))  # fmt: skip
    for om, f1, f2 in table:
        w = np.sqrt(scipy.linalg.eigh(K + (om * s) ** 2 * KG, M, eigvals_only=True,
                                      subset_by_index=(0, 3))) / s  # fmt: skip
        assert w[0] == pytest.approx(f1, rel=1e-4)
        assert np.min(np.abs(w[1:] / f2 - 1.0)) < 2e-4
    red = cantilever_modes(fe, 8, load_cases=["wzz"])  # the reduced model, 8 modes
    for om, f1, _ in table:
        assert red.frequencies({"wzz": (om * s) ** 2})[0] / s == pytest.approx(f1, rel=1e-3)
    # in-plane compression along x softens; an out-of-plane load has no membrane pre-stress
    assert red.frequencies({"wzz": -1.0})[0] < red.frequencies()[0]
    assert np.all(strip.kg("az") == 0.0)
    assert strip.kg("node3.fx") is None


@pytest.mark.parametrize(
    "kw, param",
    [
        ({"thickness": -0.01}, "thickness"),
        ({"nu": 0.5}, "nu"),
        ({"nu": -1.2}, "nu"),
        ({"E": 0.0}, "E"),
        ({"a": float("nan")}, "a"),
        ({"nx": 0}, "nx"),
        ({"element": "tri9"}, "element"),
    ],
)
def test_bad_input(kw: dict[str, object], param: str) -> None:
    args: dict[str, object] = dict(a=A_, b=A_, thickness=H_, E=E_, rho=RHO_, nu=NU_)
    args.update(kw)
    with pytest.raises(FlexModelError, match=rf"body 'wing', '{param}'"):
        Plate("wing", **args)  # type: ignore[arg-type]


def test_file_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plate = Plate("panel", 0.6, 0.4, 0.005, 70e9, 2700.0, 0.3, nx=3, ny=2)
    fe = plate.fe_model()
    tip = plate.node_at(0.6, 0.2)
    path = tmp_path / "panel.npz"
    write_fe_model(path, fe, child_nodes=[tip], kg_cases=["wzz", "ax"])
    back = read_fe_model(path)
    assert back.model.name == "panel"
    assert back.child_nodes == (tip,)
    assert np.array_equal(back.model.M, fe.M) and np.array_equal(back.model.K, fe.K)
    assert np.array_equal(back.model.Sbar, fe.Sbar)
    assert np.array_equal(back.model.node_positions, fe.node_positions)
    assert np.array_equal(back.model.kg("wzz"), fe.kg("wzz"))
    r1 = cantilever_modes(fe, 4, [tip], load_cases=["wzz"])
    r2 = cantilever_modes(back.model, 4, [tip], load_cases=["wzz"])
    assert np.allclose(r1.frequencies({"wzz": 4.0}), r2.frequencies({"wzz": 4.0}), rtol=1e-12)


def test_craig_bampton_tip_corner_static() -> None:
    # Craig-Bampton keeps the tip corner's 6 dofs: its static response to a force there is the
    # full model's exactly (the constraint modes span it)
    plate = Plate("panel", 0.8, 0.5, 0.004, 70e9, 2700.0, 0.3, nx=4, ny=3)
    fe = plate.fe_model(geometric_stiffness=False)
    tip = plate.node_at(0.8, 0.25)
    assert np.allclose(fe.node_positions[tip], [0.8, 0.25, 0.0])
    red = craig_bampton(fe, 6, [tip], load_cases=[])
    f = np.zeros(fe.n_dofs)
    f[6 * tip + 2], f[6 * tip + 3] = 10.0, 0.5  # N along z, N m about x
    free = fe.free_dofs()
    u = np.zeros(fe.n_dofs)
    u[free] = np.linalg.solve(fe.K[np.ix_(free, free)], f[free])
    shapes = red.node_shapes[1]  # (6, n): the tip's dofs per elastic coordinate
    q = np.linalg.solve(red.Kee, shapes.T @ f[6 * tip : 6 * tip + 6])
    assert np.allclose(shapes @ q, u[6 * tip : 6 * tip + 6], rtol=1e-9, atol=0)
    # and its first frequencies approach the full model's from above
    w_full = red.frequencies_full[:3]
    assert np.all(red.frequencies()[:3] >= w_full * (1 - 1e-10))
    assert np.allclose(red.frequencies()[:3], w_full, rtol=1e-2)


def test_spinning_strip_lag() -> None:
    # the strip's in-plane (lag) bending spinning about z: omega_lag^2 = omega_flap^2 - Omega^2
    # with the flap table (docs section 10): the in-plane initial-stress stiffness and Sbar's
    # centrifugal softening; a strip 1 x 0.01 m, 32 elements (their aspect ratio drives the error)
    a, b, h, E, rho = 1.0, 0.01, 0.004, 70e9, 2700.0
    strip = Plate("strip", a, b, h, E, rho, 0.0, nx=32, ny=1)
    fe = strip.fe_model()
    s = np.sqrt(E * h * b**3 / 12 / (rho * b * h * a**4))  # the lag bending's scale
    free = fe.free_dofs()
    K, M = fe.K[np.ix_(free, free)], fe.M[np.ix_(free, free)]
    KG = fe.kg("wzz")[np.ix_(free, free)]
    Sbar = fe.component_mass()
    soft = (Sbar[0, 0] + Sbar[1, 1])[np.ix_(free, free)]  # -Omega^2 (ux, uy): spin about z
    for om, f1 in ((0, 3.5160), (4, 5.5850), (8, 9.2568), (12, 13.1702)):
        o2 = (om * s) ** 2
        w2 = scipy.linalg.eigh(K + o2 * (KG - soft), M, eigvals_only=True, subset_by_index=(0, 5))
        w = np.sqrt(np.abs(w2)) / s
        ref = np.sqrt(f1**2 - om**2)
        assert np.min(np.abs(w / ref - 1.0)) < 1e-3, (om, w, ref)
