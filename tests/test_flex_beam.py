"""titopfmu.flex: the 3-D beam finite elements and their reduction, against independent
references: the closed forms of a uniform cantilever (Euler-Bernoulli bending, torsion, axial;
rigid-body and modal invariants), the textbook element matrices (Przemieniecki 1968), the
published table of a rotating uniform cantilever's flapwise frequencies (Wright, Smith, Thresher
and Wang 1982, J. Appl. Mech. 49; Hodges and Rutkowski 1981, AIAA J. 19), a Rayleigh-Ritz
solution of the rotating beam's equation written here (with hub radius), and the bad-input
refusals, each by its message.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.linalg
from numpy.polynomial import Legendre, Polynomial
from scipy.optimize import brentq

from titopfmu.flex import (
    Beam,
    FEModel,
    FlexModelError,
    Section,
    cantilever_modes,
    craig_bampton,
    read_fe_model,
    write_fe_model,
)

#: roots of cos(bL) cosh(bL) = -1 (the clamped-free Euler-Bernoulli beam), to 1e-12
BETA_L = [brentq(lambda b: np.cos(b) * np.cosh(b) + 1.0, a, a + 1.0, xtol=1e-14)
          for a in (1.3, 4.2, 7.3, 10.5)]  # fmt: skip

#: Wright et al. 1982 (Table 1) / Hodges and Rutkowski 1981: first and second flapwise
#: frequencies of a uniform cantilever rotating about an axis through its root, no hub radius,
#: omega / sqrt(EI / (rho A L^4)) at the dimensionless spin rate Omega / sqrt(EI / (rho A L^4))
#: = 0, 1, ..., 12
FLAP_1 = [3.5160, 3.6816, 4.1373, 4.7973, 5.5850, 6.4495, 7.3604, 8.2996, 9.2568, 10.2257,
          11.2023, 12.1843, 13.1702]  # fmt: skip
FLAP_2 = [22.0345, 22.1810, 22.6149, 23.3203, 24.2734, 25.4461, 26.8091, 28.3341, 29.9954,
          31.7705, 33.6404, 35.5890, 37.6031]  # fmt: skip


def aluminium_strip(n_elements: int = 40, rotary_inertia: bool = False) -> Beam:
    """A 2 m aluminium strip, 40 x 10 mm: Iz = 4 Iy, well separated families."""
    return Beam("strip", 2.0, 70e9, 2700.0, Section.rectangle(0.04, 0.01), nu=0.3,
                n_elements=n_elements, rotary_inertia=rotary_inertia)  # fmt: skip


def clamped_families(beam: Beam) -> dict[str, np.ndarray]:
    """The clamped-free frequencies (rad/s) of the beam's FE model, sorted into families by the
    dominant dof of each mode: 'u' axial, 'v' bending in x-y, 'w' bending in x-z, 't' torsion."""
    fe = beam.fe_model()
    f = fe.free_dofs()
    w2, V = scipy.linalg.eigh(fe.K[np.ix_(f, f)], fe.M[np.ix_(f, f)])
    full = np.zeros((fe.n_dofs, V.shape[1]))
    full[f] = V
    out: dict[str, list[float]] = {k: [] for k in "uvwt"}
    for i in range(w2.size):
        x = full[:, i].reshape(-1, 6)
        energy = [np.sum(x[:, c] ** 2) for c in range(4)]
        out["uvwt"[int(np.argmax(energy))]].append(float(np.sqrt(w2[i])))
    return {k: np.array(v) for k, v in out.items()}


def closed_forms(beam: Beam) -> dict[str, np.ndarray]:
    """The continuum's frequencies (rad/s): Euler-Bernoulli (beta_n L)^2 / L^2 sqrt(EI/(rho A)),
    torsion and axial (2n - 1) pi / (2L) sqrt(G J / (rho Ip)), sqrt(E / rho)."""
    s, L = beam.section, beam.length
    n = np.arange(1, 4)
    bl2 = np.array(BETA_L) ** 2 / L**2
    return {
        "v": bl2 * np.sqrt(beam.E * s.Iz / (beam.rho * s.A)),
        "w": bl2 * np.sqrt(beam.E * s.Iy / (beam.rho * s.A)),
        "u": (2 * n - 1) * np.pi / (2 * L) * np.sqrt(beam.E / beam.rho),
        "t": (2 * n - 1) * np.pi / (2 * L) * np.sqrt(beam.G * s.J / (beam.rho * s.Ip)),
    }


def test_published_beta_l() -> None:
    """The roots computed here are the published 1.8751, 4.6941, 7.8548, 10.9955."""
    assert np.allclose(BETA_L, [1.8751, 4.6941, 7.8548, 10.9955], atol=5e-5)


def test_cantilever_frequencies_default_mesh() -> None:
    """Default mesh (40 elements): the four first bending frequencies of both planes and the
    two first torsion and axial frequencies within 1e-3 of the closed forms."""
    beam = aluminium_strip()
    fe, ref = clamped_families(beam), closed_forms(beam)
    for family, count in (("v", 4), ("w", 4), ("t", 2), ("u", 2)):
        err = fe[family][:count] / ref[family][:count] - 1.0
        assert np.all(np.abs(err) < 1e-3), (family, err)
        assert np.all(err > -1e-9), (family, err)  # consistent mass: upper bounds


def test_cantilever_frequencies_converge() -> None:
    """Halving the elements divides the error by 2^4 for bending (cubic Hermite elements:
    eigenvalue error O(h^4)) and by 2^2 for axial and torsion (linear elements: O(h^2))."""
    errors = {}
    for ne in (10, 20, 40):
        beam = aluminium_strip(ne)
        fe, ref = clamped_families(beam), closed_forms(beam)
        errors[ne] = {k: fe[k][:3] / ref[k][:3] - 1.0 for k in "uvwt"}
    for family, order in (("v", 4.0), ("w", 4.0), ("u", 2.0), ("t", 2.0)):
        modes = slice(1, 3) if family in "vw" else slice(0, 3)  # mode 1 of bending: roundoff
        for coarse, fine in ((10, 20), (20, 40)):
            p = np.log2(errors[coarse][family][modes] / errors[fine][family][modes])
            assert np.all(np.abs(p - order) < 0.1), (family, coarse, p)


def test_element_matrices_textbook() -> None:
    """The element's bending mass is rho A l / 420 [156, 22l, 54, -13l; ...] and the geometric
    stiffness of a constant axial force N is N / (30 l) [36, 3l, -36, 3l; ...] (Przemieniecki
    1968, eqs. 11.30 and 15.28), both planes (ry = -dw/dx flips the rotations' signs)."""
    beam = Beam("e", 3.0, 2e11, 7800.0, Section.circle(0.05), nu=0.3, n_elements=2)
    l, mA = beam.element_length, beam.rho * beam.section.A
    m_ref = mA * l / 420.0 * np.array(
        [[156, 22 * l, 54, -13 * l], [22 * l, 4 * l**2, 13 * l, -3 * l**2],
         [54, 13 * l, 156, -22 * l], [-13 * l, -3 * l**2, -22 * l, 4 * l**2]]
    )  # fmt: skip
    g_ref = 1.0 / (30.0 * l) * np.array(
        [[36, 3 * l, -36, 3 * l], [3 * l, 4 * l**2, -3 * l, -(l**2)],
         [-36, -3 * l, 36, -3 * l], [3 * l, -(l**2), -3 * l, 4 * l**2]]
    )  # fmt: skip
    m, _ = beam.element_mass()
    kg = beam.element_geometric_stiffness(np.array([1.0]))
    flip = np.diag([1.0, -1.0, 1.0, -1.0])
    for idx, sign in (([1, 5, 7, 11], np.eye(4)), ([2, 4, 8, 10], flip)):
        assert np.allclose(m[np.ix_(idx, idx)], sign @ m_ref @ sign, rtol=1e-13, atol=0)
        assert np.allclose(kg[np.ix_(idx, idx)], sign @ g_ref @ sign, rtol=1e-13, atol=1e-16)
    bar = mA * l / 6.0 * np.array([[2.0, 1.0], [1.0, 2.0]])
    assert np.allclose(m[np.ix_([0, 6], [0, 6])], bar, rtol=1e-13)


def test_reduced_frequencies_equal_full() -> None:
    """Cantilever modal truncation keeps the full model's frequencies (1e-10 relative, against
    the full eigen analysis with vectors; LAPACK's eigenvalues-only path differs from it by 1e-9
    on the first mode of this model: its spread (omega_max / omega_1)^2 ~ 1e8 times the machine
    epsilon, the floor of any comparison); Craig-Bampton with the tip's constraint modes:
    Rayleigh-Ritz upper bounds, exact with all the fixed-interface modes kept."""
    fe = aluminium_strip(20).fe_model()
    f = fe.free_dofs()
    w2, _ = scipy.linalg.eigh(fe.K[np.ix_(f, f)], fe.M[np.ix_(f, f)])
    full = np.sqrt(w2)
    red = cantilever_modes(fe, 12).frequencies()
    assert np.allclose(red, full[:12], rtol=1e-10, atol=0)
    only = scipy.linalg.eigh(fe.K[np.ix_(f, f)], fe.M[np.ix_(f, f)], eigvals_only=True)
    assert np.allclose(red, np.sqrt(only[:12]), rtol=1e-8, atol=0)
    tip = fe.n_nodes - 1
    cb = craig_bampton(fe, 10, [tip]).frequencies()
    assert cb.size == 16
    assert np.all(cb >= full[:16] * (1 - 1e-10))
    assert cb[0] == pytest.approx(full[0], rel=1e-6)
    assert np.allclose(cb[:4], full[:4], rtol=1e-3)
    cb_all = craig_bampton(fe, f.size - 6, [tip]).frequencies()
    assert np.allclose(cb_all, full, rtol=1e-8)  # the roundoff floor, see above


@pytest.mark.parametrize("rotary", [False, True])
def test_rigid_invariants(rotary: bool) -> None:
    """m = rho A L, m c = (m L / 2, 0, 0), J_P = diag(rho Ip L, m L^2 / 3, m L^2 / 3) about the
    root (plus rho Iy L and rho Iz L with the sections' rotary inertia)."""
    beam = aluminium_strip(rotary_inertia=rotary)
    red = cantilever_modes(beam.fe_model(), 6)
    s, L, rho = beam.section, beam.length, beam.rho
    m = rho * s.A * L
    assert red.mass == pytest.approx(m, rel=1e-13)
    assert np.allclose(red.first_moment, [m * L / 2, 0, 0], rtol=1e-13, atol=1e-13 * m * L)
    extra = rho * L * np.array([0.0, s.Iy, s.Iz]) if rotary else np.zeros(3)
    J = np.diag([rho * s.Ip * L, m * L**2 / 3, m * L**2 / 3]) + np.diag(extra)
    assert np.allclose(red.inertia, J, rtol=1e-12, atol=1e-12 * m * L**2)


def test_modal_coupling_invariants() -> None:
    """Mass-normalised cantilever modes phi / sqrt(rho A L): int phi dx = 2 sigma / beta and
    int x phi dx = 2 / beta^2 (from EI phi'''' = rho A omega^2 phi and the free end), sigma =
    (sinh bL - sin bL) / (cosh bL + cos bL): Ct and Cr of the four first x-z bending modes;
    the effective masses |Ct_k|^2 are 61.3 %, 18.8 %, 6.5 %, 3.3 % of m."""
    beam = aluminium_strip()
    red = cantilever_modes(beam.fe_model(), 30)
    s, L, rho = beam.section, beam.length, beam.rho
    mA = rho * s.A
    w_modes = [k for k in range(red.n_modes) if abs(red.Ct[2, k]) > 1e-6 * np.sqrt(mA * L)][:4]
    for k, bl in zip(w_modes, BETA_L, strict=True):
        beta = bl / L
        sigma = (np.sinh(bl) - np.sin(bl)) / (np.cosh(bl) + np.cos(bl))
        ct = mA * 2 * sigma / beta / np.sqrt(mA * L)
        cr = mA * 2 / beta**2 / np.sqrt(mA * L)
        assert abs(red.Ct[2, k]) == pytest.approx(ct, rel=1e-5)
        # (r x psi)_y = -x psi_z: opposite signs
        assert red.Cr[1, k] * red.Ct[2, k] < 0
        assert abs(red.Cr[1, k]) == pytest.approx(cr, rel=1e-5)
    eff = red.Ct[2, w_modes] ** 2 / red.mass
    assert np.allclose(eff, [0.6131, 0.1882, 0.0647, 0.0330], atol=1e-4)


def test_second_order_invariants_closed_forms() -> None:
    """Craig-Bampton constraint modes of the tip (root clamped): ux stretches the beam, u = x /
    L e_x, so J_yy(q) = rho A L^3 (1 + q / L)^2 / 3 exactly (J1_yy = 2 rho A L^2 / 3, J2_yy =
    rho A L / 3); uy with the tip's rotation held is v = (3 x^2 L - 2 x^3) / L^3, so
    int rho psi_ux x psi_uy = rho A / L int x v dx e_z = 7 rho A L / 20 e_z."""
    beam = aluminium_strip(10)
    fe = beam.fe_model()
    tip = fe.n_nodes - 1
    red = craig_bampton(fe, 2, [tip])
    ux, uy = red.coordinates.index(f"node{tip}.ux"), red.coordinates.index(f"node{tip}.uy")
    mA, L = beam.rho * beam.section.A, beam.length
    assert red.J1()[ux][1, 1] == pytest.approx(2 * mA * L**2 / 3, rel=1e-12)
    assert red.J1()[ux][2, 2] == pytest.approx(2 * mA * L**2 / 3, rel=1e-12)
    assert red.J2()[ux, ux][1, 1] == pytest.approx(mA * L / 3, rel=1e-12)
    assert red.Cr1()[ux][:, uy] == pytest.approx([0, 0, 7 * mA * L / 20], rel=1e-12, abs=1e-9)
    # the mass matrix M(q) holds J(q): the stretched beam's inertia
    q = np.zeros(red.n_modes)
    q[ux] = 0.01
    assert red.mass_matrix(q)[4, 4] == pytest.approx(mA * L**3 * (1 + 0.01 / L) ** 2 / 3,
                                                     rel=1e-12)  # fmt: skip


def rotating_strip() -> tuple[Beam, float, float]:
    """A slender aluminium strip (axial and torsion far above the bending modes; Iz = 4 Iy, so
    flap and lag never coincide) and its frequency units sqrt(E Iy / (rho A L^4)) (flap, x-z
    plane) and sqrt(E Iz / (rho A L^4)) (lag, x-y plane) (rad/s)."""
    beam = Beam("rotor", 1.0, 70e9, 2700.0, Section.rectangle(0.02, 0.01), nu=0.3)
    s = beam.section
    unit = beam.E / (beam.rho * s.A * beam.length**4)
    return beam, float(np.sqrt(unit * s.Iy)), float(np.sqrt(unit * s.Iz))


def family(red, V: np.ndarray, comp: int) -> list[int]:
    """The modes V (reduced coordinates, columns) whose tip translation is along ``comp``."""
    tip = red.node_shapes[-1][:3] @ V
    big = np.abs(tip).max()
    others = [c for c in range(3) if c != comp]
    return [k for k in range(V.shape[1]) if abs(tip[comp, k]) > 1e-6 * big
            and abs(tip[comp, k]) > 10 * np.abs(tip[others, k]).max()]  # fmt: skip


def rotating_frequencies(red, spin: float, hub: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(flap, lag) frequencies (rad/s): the beam along x spins about z through P at ``spin``
    rad/s, P on a circle of radius ``hub`` (m) (the frame's acceleration a_x = -spin^2 hub).
    Flap (z): (Kee + spin^2 KG_wzz + a_x KG_ax) q = omega^2 Mee q; lag (y): also
    -spin^2 M_soft(e_z) (the centrifugal softening). Families told apart by the tip's shape."""
    K = red.stiffness({"wzz": spin**2, "ax": -(spin**2) * hub})
    out = []
    for soft, comp in ((0.0, 2), (1.0, 1)):
        Ke = K - soft * spin**2 * red.centrifugal_softening([0.0, 0.0, 1.0])
        w2, V = scipy.linalg.eigh(Ke, red.Mee)
        out.append(np.sqrt(w2[family(red, V, comp)]))
    return out[0], out[1]


def test_rotating_cantilever_published_table() -> None:
    """Flapwise frequencies of the rotating uniform cantilever (geometric stiffness of the
    centrifugal load case wzz) against Wright et al. 1982 at Omega = 0..12 (dimensionless),
    within 0.1 %; the lagwise ones (centrifugal softening from the second-order invariant)
    satisfy omega_lag^2 = omega_flap^2 - Omega^2 (uniform beam, no hub radius) with the table's
    flap values, each in its own plane's units."""
    beam, unit_flap, unit_lag = rotating_strip()
    fe = beam.fe_model()
    red = cantilever_modes(fe, 40, [fe.n_nodes - 1])
    for spin, (f1, f2) in enumerate(zip(FLAP_1, FLAP_2, strict=True)):
        flap, _ = rotating_frequencies(red, spin * unit_flap)
        assert flap[:2] / unit_flap == pytest.approx([f1, f2], rel=1e-3), spin
        _, lag = rotating_frequencies(red, spin * unit_lag)
        ref = np.sqrt(np.array([f1, f2]) ** 2 - spin**2)
        assert lag[:2] / unit_lag == pytest.approx(ref, rel=1e-3), spin


def ritz_flap(spin: float, hub: float, n: int = 14) -> np.ndarray:
    """Independent reference: Rayleigh-Ritz on the rotating uniform cantilever's energy
    (EI = rho A = L = 1), int w''^2 + N w'^2 against int w^2, N = Omega^2 (delta (1 - x) +
    (1 - x^2) / 2) (hub radius delta L), basis x^2 P_k(2x - 1), k < n, Gauss quadrature."""
    x, w = np.polynomial.legendre.leggauss(40)
    x, w = 0.5 * (x + 1.0), 0.5 * w
    basis = [Polynomial([0, 0, 1]) * Legendre.basis(k, domain=[0, 1]).convert(kind=Polynomial)
             for k in range(n)]  # fmt: skip
    d0, d1, d2 = (np.array([b.deriv(d)(x) for b in basis]) for d in (0, 1, 2))
    N = spin**2 * (hub * (1.0 - x) + 0.5 * (1.0 - x**2))
    K = (d2 * w) @ d2.T + (d1 * w * N) @ d1.T
    return np.sqrt(scipy.linalg.eigh(K, (d0 * w) @ d0.T, eigvals_only=True))


def test_rotating_cantilever_with_hub_radius() -> None:
    """With a hub radius R = L (the root on a circle: the frame's acceleration load case ax =
    -Omega^2 R), flap and lag frequencies against the Rayleigh-Ritz solution, within 0.1 %;
    the Ritz solution reproduces the published table without hub."""
    assert np.allclose([ritz_flap(s, 0.0)[0] for s in range(13)], FLAP_1, rtol=1e-4)
    beam, unit_flap, unit_lag = rotating_strip()
    fe = beam.fe_model()
    red = cantilever_modes(fe, 40, [fe.n_nodes - 1])
    for spin in (1.0, 4.0, 8.0, 12.0):
        flap, _ = rotating_frequencies(red, spin * unit_flap, hub=beam.length)
        ref = ritz_flap(spin, 1.0)[:2]
        assert flap[:2] / unit_flap == pytest.approx(ref, rel=1e-3), spin
        _, lag = rotating_frequencies(red, spin * unit_lag, hub=beam.length)
        ref = np.sqrt(ritz_flap(spin, 1.0)[:2] ** 2 - spin**2)
        assert lag[:2] / unit_lag == pytest.approx(ref, rel=1e-3), spin


def test_damping_and_load_cases() -> None:
    """Modal damping 2 zeta omega on the cantilever modes; the beam's axial load cases: a unit
    frame acceleration along x compresses it (KG_ax negative semi-definite), the centrifugal
    cases wyy, wzz stretch it (positive semi-definite), wxx gives no axial force; a tip force
    fx has KG = the unit tension's."""
    fe = aluminium_strip(10).fe_model()
    tip = fe.n_nodes - 1
    red = cantilever_modes(fe, 5, [tip], damping=0.02)
    w = red.frequencies()
    assert np.allclose(np.diag(red.damping()), 0.04 * w, rtol=1e-10)
    kg = dict(zip(red.load_cases, red.KG, strict=True))
    assert np.all(np.linalg.eigvalsh(kg["ax"]) <= 1e-9 * np.abs(kg["ax"]).max())
    assert np.all(np.linalg.eigvalsh(kg["wzz"]) >= -1e-9 * np.abs(kg["wzz"]).max())
    assert np.allclose(kg["wyy"], kg["wzz"]) and not np.any(kg["wxx"])
    assert f"node{tip}.fx" in kg and np.abs(kg[f"node{tip}.fx"]).max() > 0


# ---- bad input ------------------------------------------------------------------------------


def strip_matrices() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fe = aluminium_strip(4).fe_model()
    return fe.node_positions, np.array(fe.M), np.array(fe.K)


def test_refuses_bad_mass_matrix() -> None:
    pos, M, K = strip_matrices()
    bad = M.copy()
    bad[0, 1] += 1.0
    with pytest.raises(FlexModelError, match=r"body 'boom', matrix 'M': not symmetric"):
        FEModel("boom", pos, bad, K)
    bad = M.copy()
    bad[6, 6] = -1.0
    with pytest.raises(FlexModelError, match=r"body 'boom', matrix 'M': not positive definite"):
        FEModel("boom", pos, bad, K)


def test_refuses_bad_stiffness_matrix() -> None:
    pos, M, K = strip_matrices()
    bad = K.copy()
    bad[7, 8] += 1e3
    with pytest.raises(FlexModelError, match=r"body 'boom', matrix 'K': not symmetric"):
        FEModel("boom", pos, M, bad)
    with pytest.raises(FlexModelError, match=r"matrix 'K': not positive semi-definite"):
        FEModel("boom", pos, M, K - 1e-3 * np.abs(K).max() * np.eye(K.shape[0]))
    with pytest.raises(FlexModelError, match=r"matrix 'M': has 24 rows, the model has 30 dofs"):
        FEModel("boom", pos, M[:24, :24], K)


def test_refuses_too_many_rigid_modes() -> None:
    """A node cut loose: 12 rigid-body modes. A torsion-free beam grounded at the root: one
    zero mode only, but the clamped model is singular (a mechanism)."""
    beam = aluminium_strip(4)
    pos, M, K = strip_matrices()
    loose = K.copy()
    loose[18:30, 18:30] -= beam.element_stiffness()  # the last element removed: node 4 loose
    with pytest.raises(FlexModelError, match=r"matrix 'K': has 12 rigid-body modes, more than"):
        FEModel("boom", pos, M, loose)
    soft = Beam("boom", 2.0, 70e9, 2700.0, Section(4e-4, 1e-9, 1e-8, 1e-30), G=1.0, n_elements=4)
    Kt = soft.fe_model().K
    Kt[:6, :6] += 1e9 * np.eye(6)  # the root grounded: the free-free rigid modes are gone
    Kt[3::6, 3::6] = 0.0  # no torsion stiffness at all
    Kt[3, 3] = 1e9
    with pytest.raises(FlexModelError, match=r"singular with the root node 0 clamped: more rigid"):
        FEModel("boom", pos, M, Kt)


def test_refuses_bad_nodes_and_mode_counts() -> None:
    fe = aluminium_strip(4).fe_model()
    with pytest.raises(FlexModelError, match=r"'child_nodes': node 9 does not exist \(nodes 0..4"):
        craig_bampton(fe, 2, [9])
    with pytest.raises(FlexModelError, match=r"'n_modes': 25 modes asked, the model holds 24"):
        cantilever_modes(fe, 25)
    with pytest.raises(FlexModelError, match=r"'n_modes': 19 modes asked, the model holds 18"):
        craig_bampton(fe, 19, [4])
    with pytest.raises(FlexModelError, match=r"'child_nodes': must be distinct and differ"):
        craig_bampton(fe, 2, [0])
    with pytest.raises(FlexModelError, match=r"body 'strip', 'root': node 7 does not exist"):
        FEModel("strip", fe.node_positions, fe.M, fe.K, root=7)
    with pytest.raises(FlexModelError, match=r"'node_positions': the root node 0 is at"):
        FEModel("strip", fe.node_positions + 1.0, fe.M, fe.K)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("length", -2.0, r"body 'rod', 'length': must be finite and > 0, got -2.0"),
        ("length", 0.0, r"body 'rod', 'length': must be finite and > 0, got 0.0"),
        ("E", 0.0, r"body 'rod', 'E': must be finite and > 0"),
        ("rho", -1.0, r"body 'rod', 'rho': must be finite and > 0"),
        ("rho", float("nan"), r"body 'rod', 'rho': must be finite and > 0"),
        ("n_elements", 0, r"body 'rod', 'n_elements': must be an integer >= 1"),
    ],
)
def test_refuses_bad_beam(key: str, value: float, message: str) -> None:
    args = {"name": "rod", "length": 1.0, "E": 1e9, "rho": 1e3,
            "section": Section.circle(0.01), "nu": 0.3}  # fmt: skip
    args[key] = value
    with pytest.raises(FlexModelError, match=message):
        Beam(**args)


def test_refuses_bad_sections() -> None:
    with pytest.raises(FlexModelError, match=r"body 'rod', 'section.J': must be finite and > 0"):
        Beam("rod", 1.0, 1e9, 1e3, Section(1e-4, 1e-9, 1e-9, 0.0), nu=0.3)
    with pytest.raises(FlexModelError, match=r"'inner_diameter': must be in \[0, outer"):
        Section.tube(0.01, 0.02)
    with pytest.raises(FlexModelError, match=r"'nu': must be in \(-1, 0.5\)"):
        Beam("rod", 1.0, 1e9, 1e3, Section.circle(0.01), nu=0.7)
    with pytest.raises(FlexModelError, match=r"body 'rod', 'G': 1.0 disagrees with E / \(2"):
        Beam("rod", 1.0, 1e9, 1e3, Section.circle(0.01), G=1.0, nu=0.3)
    with pytest.raises(FlexModelError, match=r"body 'rod', 'G': give G or nu"):
        Beam("rod", 1.0, 1e9, 1e3, Section.circle(0.01))


def test_section_closed_forms() -> None:
    """Circle, tube (pi d^4 / 64, J = Ip) and rectangle (b h^3 / 12; a square's torsion
    constant 0.1406 a^4, Roark)."""
    c = Section.circle(0.02)
    assert c.A == pytest.approx(np.pi * 1e-4) and c.Iy == pytest.approx(np.pi * 0.02**4 / 64)
    t = Section.tube(0.02, 0.01)
    assert t.J == pytest.approx(np.pi * (0.02**4 - 0.01**4) / 32)
    r = Section.rectangle(0.03, 0.01)
    assert (r.Iy, r.Iz) == (pytest.approx(0.03 * 0.01**3 / 12), pytest.approx(0.01 * 0.03**3 / 12))
    assert Section.rectangle(0.01, 0.01).J == pytest.approx(0.1406 * 0.01**4, rel=2e-3)


# ---- file format ----------------------------------------------------------------------------


def test_file_round_trip(tmp_path) -> None:
    """Write, read back: the same matrices, nodes, interface and geometric stiffness; the
    reduced models are identical."""
    fe = aluminium_strip(8).fe_model()
    path = tmp_path / "strip.npz"
    write_fe_model(path, fe, [8, 4], node_ids=list(range(101, 110)),
                   kg_cases=["wzz", "ax", "node8.fx"])  # fmt: skip
    back = read_fe_model(path)
    assert back.child_nodes == (8, 4) and back.node_ids == tuple(range(101, 110))
    assert np.array_equal(back.model.M, fe.M) and np.array_equal(back.model.K, fe.K)
    assert np.array_equal(back.model.node_positions, fe.node_positions)
    assert np.array_equal(back.model.Sbar, fe.Sbar)
    a = cantilever_modes(fe, 6, [8, 4], load_cases=["wzz", "ax", "node8.fx"])
    b = cantilever_modes(back.model, 6, back.child_nodes, load_cases=["wzz", "ax", "node8.fx"])
    for key in ("Mee", "Kee", "Ct", "Cr", "S", "R", "KG", "node_shapes", "inertia"):
        assert np.allclose(getattr(a, key), getattr(b, key), rtol=1e-12, atol=1e-14), key


def rewrite(path, **changes) -> None:
    with np.load(path) as d:
        data = {k: d[k] for k in d.files}
    data.update(changes)
    np.savez(path, **data)


def test_file_units_converted_and_checked(tmp_path) -> None:
    """A file in mm, t, s reads back in SI; a wrong unit declaration is caught by the declared
    total mass; an unknown unit, a missing array and an unknown interface node are refused."""
    fe = aluminium_strip(4).fe_model()
    path = tmp_path / "strip.npz"
    write_fe_model(path, fe, [4])
    g = np.ones(fe.n_dofs)
    g.reshape(-1, 6)[:, 3:] = 1e3  # a rotation's length factor: mm per m
    gg = np.outer(g, g)
    rewrite(path, units=np.array(json.dumps({"length": "mm", "mass": "t", "time": "s"})),
            node_positions=fe.node_positions * 1e3, M=fe.M * 1e-3 * gg, K=fe.K * 1e-3 * gg,
            Sbar=fe.Sbar * 1e-3 * gg, total_mass_kg=np.array(fe.M[0::6, 0::6].sum()))  # fmt: skip
    back = read_fe_model(path).model
    assert np.allclose(back.M, fe.M, rtol=1e-12, atol=1e-12 * np.abs(fe.M).max())
    assert np.allclose(back.K, fe.K, rtol=1e-12, atol=1e-12 * np.abs(fe.K).max())
    assert np.allclose(back.node_positions, fe.node_positions, rtol=1e-12)
    rewrite(path, units=np.array(json.dumps({"length": "mm", "mass": "kg", "time": "s"})))
    msg = r"body 'strip', matrix 'M': rigid-body mass .* differs from the declared total_mass_kg"
    with pytest.raises(FlexModelError, match=msg + r" .*inconsistent units"):
        read_fe_model(path)
    rewrite(path, units=np.array(json.dumps({"length": "inch", "mass": "kg", "time": "s"})))
    with pytest.raises(FlexModelError, match=r"body 'strip', 'units': .*\(JSON\): declare the "
                       r"model's consistent system \{length: m\|mm\|in\|ft"):
        read_fe_model(path)
    write_fe_model(path, fe, [4])
    rewrite(path, interface=np.array([77]))
    with pytest.raises(FlexModelError, match=r"body 'strip', 'interface': node 77 does not exist"):
        read_fe_model(path)
    write_fe_model(path, fe, [4])
    with np.load(path) as d:
        data = {k: d[k] for k in d.files if k != "K"}
    np.savez(path, **data)
    with pytest.raises(FlexModelError, match=r"body 'strip', 'K': missing from the file"):
        read_fe_model(path)


def test_reduced_model_file(tmp_path) -> None:
    """A reduced model written and read back is the same; the derived arrays the core reads are
    stored beside; a corrupted modal mass or inconsistent node shapes are refused by name."""
    from titopfmu.flex import read_reduced_model, write_reduced_model

    fe = aluminium_strip(8).fe_model()
    red = craig_bampton(fe, 4, [8], damping=0.01)
    path = tmp_path / "red.npz"
    write_reduced_model(path, red)
    back = read_reduced_model(path)
    for key in ("Mee", "Kee", "Ct", "Cr", "S", "R", "KG", "node_shapes", "inertia"):
        assert np.array_equal(getattr(back, key), getattr(red, key)), key
    assert (back.name, back.mass, back.load_cases) == (red.name, red.mass, red.load_cases)
    assert back.coordinates == red.coordinates and back.node_ids == red.node_ids
    with np.load(path) as d:
        assert np.array_equal(d["J2"], red.J2()) and np.array_equal(d["De"], red.damping())
    bad = np.array(red.Mee)
    bad[0, 0] = -1.0
    rewrite(path, Mee=bad)
    with pytest.raises(FlexModelError, match=r"body 'strip', matrix 'Mee': not positive definite"):
        read_reduced_model(path)
    write_reduced_model(path, red)
    rewrite(path, node_shapes=np.array(red.node_shapes)[:, :, :3])
    with pytest.raises(FlexModelError, match=r"body 'strip', 'node_shapes': shape \(2, 6, 3\)"):
        read_reduced_model(path)


def test_buckling_loads_from_the_load_cases() -> None:
    """The geometric stiffness of the load cases against the classical buckling loads of a
    cantilever (Timoshenko and Gere, Theory of Elastic Stability, 1961, secs. 2.1 and 2.10):
    a compressive tip force P (case node<tip>.fx = -P) buckles it at P = pi^2 E I / (4 L^2);
    its own weight standing upright (gravity -g e_x: case ax = a_P - g = +g) at
    rho A g L^3 = 7.837 E I (Greenhill). Both planes: Iy for x-z, Iz for x-y."""
    beam = aluminium_strip()
    fe = beam.fe_model()
    tip = fe.n_nodes - 1
    red = cantilever_modes(fe, 30, [tip])
    kg = dict(zip(red.load_cases, red.KG, strict=True))
    E, s, L = beam.E, beam.section, beam.length
    for case, sign, expected in (
        (f"node{tip}.fx", 1.0, np.pi**2 * E * np.array([s.Iy, s.Iz]) / (4 * L**2)),
        ("ax", -1.0, 7.837 * E * np.array([s.Iy, s.Iz]) / (beam.rho * s.A * L**3)),
    ):
        # Kee + lambda KG singular: Kee phi = mu (sign KG) phi, mu = -sign lambda > 0 (the
        # tip force compresses for fx < 0, the weight for ax > 0)
        mu = scipy.linalg.eigvals(red.Kee, sign * kg[case]).real
        crit = np.sort(mu[np.isfinite(mu) & (mu > 0)])
        assert crit[0] == pytest.approx(expected[0], rel=1e-3), case  # the weak plane, x-z
        assert np.min(np.abs(crit / expected[1] - 1.0)) < 1e-3, case  # x-y, among the others


def test_nodal_approximation_of_a_user_model_converges() -> None:
    """A user's model without Sbar (the nodal approximation of the second-order invariants
    from M) still gives the rotating beam's lag frequencies: within 1e-3 of omega_lag^2 =
    omega_flap^2 - Omega^2 (Wright et al.'s values) at 40 elements up to Omega = 12, the error
    falling at least threefold from 20 to 40 elements (the exact Sbar: 2e-5)."""
    import dataclasses

    beam, _, unit_lag = rotating_strip()
    errors = []
    for ne in (20, 40):
        fe = dataclasses.replace(beam, n_elements=ne).fe_model()
        user = FEModel("user", fe.node_positions, fe.M, fe.K, 0, None, fe.geometric_stiffness)
        red = cantilever_modes(user, 40, [user.n_nodes - 1])
        err = []
        for spin in (3, 6, 12):
            _, lag = rotating_frequencies(red, spin * unit_lag)
            err.append(lag[0] / unit_lag / np.sqrt(FLAP_1[spin] ** 2 - spin**2) - 1.0)
        errors.append(np.abs(err))
    assert np.all(errors[1] < 1e-3)
    assert np.all(errors[0] > 3.0 * errors[1])


def test_timoshenko_element_stiffness_textbook() -> None:
    """With shear, the bending stiffness is E I / ((1 + phi) l^3) [12, 6l, -12, 6l; 6l, (4 + phi)
    l^2, -6l, (2 - phi) l^2; ...], phi = 12 E I / (kappa G A l^2) (Przemieniecki 1968, eq.
    5.116), both planes."""
    beam = Beam("t", 1.0, 2e11, 7800.0, Section.rectangle(0.1, 0.05), nu=0.3, n_elements=4,
                shear_coefficient=5.0 / 6.0)  # fmt: skip
    l, s = beam.element_length, beam.section
    k = beam.element_stiffness()
    flip = np.diag([1.0, -1.0, 1.0, -1.0])
    for idx, sign, I in (([1, 5, 7, 11], np.eye(4), s.Iz), ([2, 4, 8, 10], flip, s.Iy)):
        phi = 12 * beam.E * I / (5.0 / 6.0 * beam.G * s.A * l**2)
        ref = beam.E * I / ((1 + phi) * l**3) * np.array(
            [[12, 6 * l, -12, 6 * l], [6 * l, (4 + phi) * l**2, -6 * l, (2 - phi) * l**2],
             [-12, -6 * l, 12, -6 * l], [6 * l, (2 - phi) * l**2, -6 * l, (4 + phi) * l**2]]
        )  # fmt: skip
        assert phi > 0.1
        assert np.allclose(k[np.ix_(idx, idx)], sign @ ref @ sign, rtol=1e-12, atol=0)


def test_timoshenko_simply_supported_frequencies() -> None:
    """A stubby beam (L / h = 5, 80 elements) pinned at both ends, x-y plane: with shear and
    rotary inertia the three first frequencies within 1e-3 of Timoshenko's closed form
    (2.3e-5, 2.7e-4, 9.6e-4 at 40 elements), det [kappa G A k^2 -
    rho A w^2, -kappa G A k; -kappa G A k, E I k^2 + kappa G A - rho I w^2] = 0, k = n pi / L
    (lower root); Euler-Bernoulli's are off by more than 2 %."""
    kappa = 5.0 / 6.0
    for shear, tol in ((kappa, 1e-3), (None, None)):
        beam = Beam("stub", 1.0, 2e11, 7800.0, Section.rectangle(0.2, 0.05), nu=0.3,
                    rotary_inertia=True, shear_coefficient=shear, n_elements=80)  # fmt: skip
        fe = beam.fe_model()
        n = fe.n_nodes
        dofs = [6 * i + c for i in range(n) for c in (1, 5)]  # v, rz
        dofs.remove(1)  # v = 0 at both ends
        dofs.remove(6 * (n - 1) + 1)
        w2 = scipy.linalg.eigh(fe.K[np.ix_(dofs, dofs)], fe.M[np.ix_(dofs, dofs)],
                               eigvals_only=True)[:3]  # fmt: skip
        s, E, G, rho = beam.section, beam.E, beam.G, beam.rho
        ref = []
        for mode in (1, 2, 3):
            k = mode * np.pi / beam.length
            kGA = kappa * G * s.A
            # (kGA k^2 - rho A x)(E I k^2 + kGA - rho I x) - (kGA k)^2 = 0, x = omega^2
            a2 = rho * s.A * rho * s.Iz
            a1 = -(kGA * k**2 * rho * s.Iz + rho * s.A * (E * s.Iz * k**2 + kGA))
            a0 = kGA * k**2 * (E * s.Iz * k**2 + kGA) - (kGA * k) ** 2
            ref.append(min(np.roots([a2, a1, a0]).real))
        err = np.sqrt(w2) / np.sqrt(ref) - 1.0
        if tol:
            assert np.all(np.abs(err) < tol), err
        else:
            assert np.all(err > 0.02), err


def test_nodal_approximation_is_exact_for_lumped_masses() -> None:
    """Without Sbar, a lumped-mass model's component mass operator is exact: Sbar[a, b] couples
    node i's a-translation with its b-translation by m_i (int rho u_a u_b over point masses),
    for a != b too, and the Coriolis invariant Cr1 of two in-plane bending shapes follows."""
    beam, _, _ = rotating_strip()
    fe = dataclasses.replace(beam, n_elements=6).fe_model()
    rng = np.random.default_rng(2)
    masses = rng.uniform(0.5, 2.0, fe.n_nodes)
    lumped = np.diag(np.repeat(masses, 6) * np.tile([1, 1, 1, 1e-3, 1e-3, 1e-3], fe.n_nodes))
    user = FEModel("lumped", fe.node_positions, lumped, fe.K, 0, None)
    S = user.component_mass()
    exact = np.zeros_like(S)
    for i, m in enumerate(masses):
        for a in range(3):
            for b in range(3):
                exact[a, b, 6 * i + a, 6 * i + b] = m
    np.testing.assert_array_equal(S, exact)
