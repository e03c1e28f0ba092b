"""A uniform straight 3-D beam meshed with 2-node, 12-dof elements (Euler-Bernoulli, or
Timoshenko with a shear coefficient).

The beam lies along the x axis of its body frame R_a, from the root node P (x = 0, the parent
port) to the tip (x = L). Per node, 6 dofs ``[u, v, w, rx, ry, rz]`` (m, rad): axial u (linear
shape functions), torsion rx (linear), bending in the x-y plane (v, rz) and in the x-z plane
(w, ry): cubic Hermite (rz = dv/dx, ry = -dw/dx) for Euler-Bernoulli, Friedman and Kosmatka's
interdependent interpolation with shear (rz, -ry the sections' rotations). Consistent mass
matrices (Przemieniecki 1968, "Theory of Matrix Structural Analysis", ch. 11): translational
``int rho A N^T N dx``, torsional ``int rho Ip N^T N dx`` (Ip = Iy + Iz), optionally the
sections' rotary inertia. The geometric stiffness of an axial force distribution N(x) (N,
tension > 0) is ``int N(x) (v' dv' + w' dw') dx``, integrated exactly for the polynomial N(x)
of the load cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import checks
from .checks import FlexModelError, FloatArray
from .fe import BODY_LOAD_CASES, NODE_LOAD_COMPONENTS, FEModel

#: Gauss-Legendre points and weights on [0, 1], exact to degree 9 (N(x) quadratic times two
#: cubic-derivative products is degree 6; the mass and stiffness integrands are degree <= 6)
_XI, _W = np.polynomial.legendre.leggauss(5)
_XI = 0.5 * (_XI + 1.0)
_W = 0.5 * _W


@dataclass(frozen=True)
class Section:
    """A beam's cross-section properties (SI).

    :param A: area (m^2)
    :param Iy: second moment of area about the section's y axis, int z^2 dA (m^4): bending in
        the x-z plane
    :param Iz: second moment of area about z, int y^2 dA (m^4): bending in the x-y plane
    :param J: torsion constant (m^4); the polar moment Iy + Iz for a circular section
    """

    A: float
    Iy: float
    Iz: float
    J: float

    @property
    def Ip(self) -> float:
        """Polar moment of area Iy + Iz (m^4): the section's torsional mass is rho Ip."""
        return self.Iy + self.Iz

    @classmethod
    def circle(cls, diameter: float, body: str = "beam") -> Section:
        """A solid circular section of ``diameter`` (m)."""
        d = checks.positive(body, "diameter", diameter)
        i = math.pi * d**4 / 64.0
        return cls(math.pi * d**2 / 4.0, i, i, 2.0 * i)

    @classmethod
    def tube(cls, outer_diameter: float, inner_diameter: float, body: str = "beam") -> Section:
        """A circular tube (m); ``inner_diameter`` < ``outer_diameter``."""
        do = checks.positive(body, "outer_diameter", outer_diameter)
        di = float(inner_diameter)
        if not (0.0 <= di < do):
            raise FlexModelError(
                body, "'inner_diameter'", f"must be in [0, outer_diameter = {do}), got {di}"
            )
        i = math.pi * (do**4 - di**4) / 64.0
        return cls(math.pi * (do**2 - di**2) / 4.0, i, i, 2.0 * i)

    @classmethod
    def rectangle(cls, width_y: float, height_z: float, body: str = "beam") -> Section:
        """A solid rectangle ``width_y`` (along y) by ``height_z`` (along z) (m). Torsion
        constant: J = a b^3 (1/3 - 0.21 (b/a) (1 - b^4 / (12 a^4))), a >= b the sides (Roark's
        Formulas for Stress and Strain, 7th ed., table 10.7, case 4; within 0.5 %)."""
        b_y = checks.positive(body, "width_y", width_y)
        h_z = checks.positive(body, "height_z", height_z)
        a, b = max(b_y, h_z), min(b_y, h_z)
        J = a * b**3 * (1.0 / 3.0 - 0.21 * (b / a) * (1.0 - b**4 / (12.0 * a**4)))
        return cls(b_y * h_z, b_y * h_z**3 / 12.0, h_z * b_y**3 / 12.0, J)


def _bending(xi: float, l: float, phi: float) -> tuple[FloatArray, ...]:
    """Shape functions of one bending plane at xi in [0, 1] on an element of length l, for the
    dofs (v1, theta1, v2, theta2): ``(h, dh, g, dg)``, the displacement v, its x-derivative, the
    section rotation theta and its x-derivative. phi = 12 E I / (kappa G A l^2) (Timoshenko's
    shear parameter; 0: Euler-Bernoulli, cubic Hermite, theta = v'): the interdependent
    interpolation of Friedman and Kosmatka (Computers and Structures 47(3), 1993), exact for the
    static Timoshenko beam."""
    d = 1.0 + phi
    h = np.array(
        [2 * xi**3 - 3 * xi**2 - phi * xi + d,
         l * (xi**3 - (2 + phi / 2) * xi**2 + (1 + phi / 2) * xi),
         -2 * xi**3 + 3 * xi**2 + phi * xi,
         l * (xi**3 - (1 - phi / 2) * xi**2 - phi / 2 * xi)]
    ) / d  # fmt: skip
    dh = np.array(
        [6 * xi**2 - 6 * xi - phi,
         l * (3 * xi**2 - 2 * (2 + phi / 2) * xi + (1 + phi / 2)),
         -6 * xi**2 + 6 * xi + phi,
         l * (3 * xi**2 - 2 * (1 - phi / 2) * xi - phi / 2)]
    ) / (d * l)  # fmt: skip
    g = np.array(
        [6 * (xi**2 - xi) / l, 3 * xi**2 - (4 + phi) * xi + d, -6 * (xi**2 - xi) / l,
         3 * xi**2 - (2 - phi) * xi]
    ) / d  # fmt: skip
    dg = np.array([6 * (2 * xi - 1) / l, 6 * xi - (4 + phi), -6 * (2 * xi - 1) / l,
                   6 * xi - (2 - phi)]) / (d * l)  # fmt: skip
    return h, dh, g, dg


#: element dofs of the x-y bending plane (v1, rz1, v2, rz2) and of the x-z plane (w1, ry1, w2,
#: ry2), with the sign of each dof in the plane's interpolation (theta = rz in x-y, -ry in x-z)
_XY = (np.array([1, 5, 7, 11]), np.array([1.0, 1.0, 1.0, 1.0]))
_XZ = (np.array([2, 4, 8, 10]), np.array([1.0, -1.0, 1.0, -1.0]))


def _shape(
    xi: float, l: float, phi_xy: float = 0.0, phi_xz: float = 0.0
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """``(N, dN, T, dT)`` at xi: (3, 12) shape functions of the centroid line's displacement
    (u, v, w) and (3, 12) their x-derivatives; (2, 12) the section rotations theta of the x-y
    plane (rz) and of the x-z plane (-ry) and (2, 12) their x-derivatives."""
    N, dN = np.zeros((3, 12)), np.zeros((3, 12))
    T, dT = np.zeros((2, 12)), np.zeros((2, 12))
    N[0, 0], N[0, 6] = 1.0 - xi, xi
    dN[0, 0], dN[0, 6] = -1.0 / l, 1.0 / l
    for row, (idx, sign), phi in ((1, _XY, phi_xy), (2, _XZ, phi_xz)):
        h, dh, g, dg = _bending(xi, l, phi)
        N[row, idx], dN[row, idx] = sign * h, sign * dh
        T[row - 1, idx], dT[row - 1, idx] = sign * g, sign * dg
    return N, dN, T, dT


@dataclass(frozen=True)
class Beam:
    """A uniform straight beam along x of R_a, root at P (x = 0), meshed with ``n_elements``
    equal elements.

    :param name: the body's name
    :param length: L (m)
    :param E: Young's modulus (Pa)
    :param rho: density (kg/m^3)
    :param section: the cross-section (:class:`Section`)
    :param G: shear modulus (Pa); or give ``nu`` (G = E / (2 (1 + nu))); both: they must agree
    :param nu: Poisson's ratio, in (-1, 0.5)
    :param n_elements: number of elements (40 by default: the first four bending frequencies
        and the first two axial and torsion frequencies within 1e-3 of the continuum's)
    :param rotary_inertia: add the sections' rotary inertia rho Iy, rho Iz to the mass (False:
        Euler-Bernoulli's continuum, the closed forms of the tests)
    :param shear_coefficient: Timoshenko's shear coefficient kappa (e.g. 5/6 for a rectangle):
        shear deformation with phi = 12 E I / (kappa G A l^2) per plane (use it with
        ``rotary_inertia=True`` for Timoshenko's beam); None: Euler-Bernoulli
    """

    name: str
    length: float
    E: float
    rho: float
    section: Section
    G: float | None = None
    nu: float | None = None
    n_elements: int = 40
    rotary_inertia: bool = False
    shear_coefficient: float | None = None

    def __post_init__(self) -> None:
        body = self.name
        for key in ("length", "E", "rho"):
            object.__setattr__(self, key, checks.positive(body, key, getattr(self, key)))
        if not isinstance(self.section, Section):
            raise FlexModelError(body, "'section'", "must be a Section")
        for key in ("A", "Iy", "Iz", "J"):
            checks.positive(body, f"section.{key}", getattr(self.section, key))
        if self.G is None and self.nu is None:
            raise FlexModelError(body, "'G'", "give G or nu")
        if self.nu is not None:
            nu = float(self.nu)
            if not -1.0 < nu < 0.5:
                raise FlexModelError(body, "'nu'", f"must be in (-1, 0.5), got {nu}")
            G_nu = self.E / (2.0 * (1.0 + nu))
            if self.G is not None and abs(float(self.G) - G_nu) > 1e-12 * G_nu:
                raise FlexModelError(
                    body, "'G'", f"{self.G} disagrees with E / (2 (1 + nu)) = {G_nu}"
                )
            object.__setattr__(self, "G", G_nu)
        object.__setattr__(self, "G", checks.positive(body, "G", self.G))
        if self.shear_coefficient is not None:
            checks.positive(body, "shear_coefficient", self.shear_coefficient)
        if not isinstance(self.n_elements, (int, np.integer)) or self.n_elements < 1:
            raise FlexModelError(
                body, "'n_elements'", f"must be an integer >= 1, got {self.n_elements!r}"
            )

    @property
    def element_length(self) -> float:
        """l = L / n_elements (m)."""
        return self.length / self.n_elements

    @property
    def mass(self) -> float:
        """rho A L (kg)."""
        return self.rho * self.section.A * self.length

    def node_positions(self) -> FloatArray:
        """(n_elements + 1, 3) node positions in R_a (m)."""
        x = np.linspace(0.0, self.length, self.n_elements + 1)
        return np.column_stack([x, np.zeros_like(x), np.zeros_like(x)])

    def shear_parameters(self) -> tuple[float, float]:
        """(phi_xy, phi_xz) = 12 E (Iz, Iy) / (kappa G A l^2); zeros for Euler-Bernoulli."""
        if self.shear_coefficient is None:
            return 0.0, 0.0
        s, l = self.section, self.element_length
        kGA = self.shear_coefficient * self.G * s.A  # type: ignore[operator]
        return 12 * self.E * s.Iz / (kGA * l**2), 12 * self.E * s.Iy / (kGA * l**2)

    def element_stiffness(self) -> FloatArray:
        """The (12, 12) element stiffness matrix: axial, torsion, and per bending plane
        int E I theta'^2 + kappa G A (v' - theta)^2 dx (the shear term with Timoshenko only)."""
        s, l = self.section, self.element_length
        k = np.zeros((12, 12))
        bar = np.array([[1.0, -1.0], [-1.0, 1.0]]) / l
        k[np.ix_([0, 6], [0, 6])] += self.E * s.A * bar
        k[np.ix_([3, 9], [3, 9])] += self.G * s.J * bar  # type: ignore[operator]
        phis = self.shear_parameters()
        kGA = 0.0 if self.shear_coefficient is None else self.shear_coefficient * self.G * s.A
        for xi, w in zip(_XI, _W, strict=True):
            _, dN, T, dT = _shape(xi, l, *phis)
            for plane, EI in ((0, self.E * s.Iz), (1, self.E * s.Iy)):
                k += (EI * w * l) * np.outer(dT[plane], dT[plane])
                if kGA:
                    gamma = dN[plane + 1] - T[plane]
                    k += (kGA * w * l) * np.outer(gamma, gamma)
        return k

    def element_mass(self) -> tuple[FloatArray, FloatArray]:
        """``(m, Sbar)``: the (12, 12) consistent element mass matrix and the (3, 3, 12, 12)
        component mass operator of the centroid line, int rho A N_a^T N_b dx."""
        s, l = self.section, self.element_length
        S = np.zeros((3, 3, 12, 12))
        rot = np.zeros((12, 12))
        for xi, w in zip(_XI, _W, strict=True):
            N, _, T, _ = _shape(xi, l, *self.shear_parameters())
            S += (self.rho * s.A * w * l) * np.einsum("ai,bj->abij", N, N)
            if self.rotary_inertia:  # the sections' rotations theta (rz, -ry)
                rot += (self.rho * s.Iz * w * l) * np.outer(T[0], T[0])
                rot += (self.rho * s.Iy * w * l) * np.outer(T[1], T[1])
        m = S[0, 0] + S[1, 1] + S[2, 2] + rot
        tors = self.rho * s.Ip * l / 6.0 * np.array([[2.0, 1.0], [1.0, 2.0]])
        m[np.ix_([3, 9], [3, 9])] += tors
        return m, S

    def element_geometric_stiffness(self, n_poly: FloatArray) -> FloatArray:
        """The (12, 12) geometric stiffness of an element whose axial force is the polynomial
        ``N(xi) = sum_k n_poly[k] xi^k`` (N, tension > 0; xi in [0, 1] along the element)."""
        l = self.element_length
        kg = np.zeros((12, 12))
        for xi, w in zip(_XI, _W, strict=True):
            _, dN, _, _ = _shape(xi, l, *self.shear_parameters())
            n = float(np.polyval(np.asarray(n_poly)[::-1], xi))
            kg += (n * w * l) * (np.outer(dN[1], dN[1]) + np.outer(dN[2], dN[2]))
        return kg

    def _assemble(self, elem: FloatArray) -> FloatArray:
        """Assemble one (..., 12, 12) element matrix repeated over all elements."""
        nd = 6 * (self.n_elements + 1)
        out = np.zeros(elem.shape[:-2] + (nd, nd))
        for e in range(self.n_elements):
            sl = slice(6 * e, 6 * e + 12)
            out[..., sl, sl] += elem
        return out

    def axial_force(self, case: str, node: int | None = None) -> list[FloatArray]:
        """Per element, the polynomial coefficients (in xi, ascending) of the axial force N (N,
        tension > 0) per unit load value of ``case``: a body-load case of
        :data:`~titopfmu.flex.fe.BODY_LOAD_CASES` (N(x) = int_x^L rho A f_x ds, f the body
        force per unit mass on the axis), or a component of :data:`NODE_LOAD_COMPONENTS` at
        ``node`` (a unit axial force at node j: N = 1 on the elements inboard of it)."""
        L, mA, l = self.length, self.rho * self.section.A, self.element_length
        out = []
        for e in range(self.n_elements):
            x0 = e * l
            # x = x0 + l xi
            if case == "ax":  # f_x = -1: N = -rho A (L - x)
                c = [-mA * (L - x0), mA * l, 0.0]
            elif case in ("wyy", "wzz"):  # f_x = x: N = rho A (L^2 - x^2) / 2
                c = [0.5 * mA * (L**2 - x0**2), -mA * x0 * l, -0.5 * mA * l**2]
            elif case == "fx":
                c = [1.0 if e < node else 0.0, 0.0, 0.0]  # type: ignore[operator]
            else:  # no axial force on the axis from the other cases
                c = [0.0, 0.0, 0.0]
            out.append(np.array(c))
        return out

    def geometric_stiffness(self, case: str) -> FloatArray | None:
        """The full geometric stiffness per unit load value of ``case`` (a body-load case, or
        ``node<j>.<component>``), or None for an unknown case."""
        if case in BODY_LOAD_CASES:
            coeffs = self.axial_force(case)
        elif case.startswith("node") and "." in case:
            head, comp = case.split(".", 1)
            try:
                j = int(head[4:])
            except ValueError:
                return None
            if comp not in NODE_LOAD_COMPONENTS or not 0 <= j <= self.n_elements:
                return None
            coeffs = self.axial_force(comp, j)
        else:
            return None
        nd = 6 * (self.n_elements + 1)
        out = np.zeros((nd, nd))
        for e, c in enumerate(coeffs):
            if np.any(c):
                sl = slice(6 * e, 6 * e + 12)
                out[sl, sl] += self.element_geometric_stiffness(c)
        return out

    def fe_model(self) -> FEModel:
        """The assembled finite-element model (root node 0 at P)."""
        m, S = self.element_mass()
        return FEModel(
            name=self.name,
            node_positions=self.node_positions(),
            M=self._assemble(m),
            K=self._assemble(self.element_stiffness()),
            root=0,
            Sbar=self._assemble(S),
            geometric_stiffness=self.geometric_stiffness,
        )
