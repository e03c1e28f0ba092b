"""Time functions from expressions: ``f(t)`` written as text, so that a model file can hold it.

A :class:`~titopfmu.blocks.TimeFunction` built on a :class:`TimeExpression` can be saved in a
model file (``expression:``); one built on any other callable cannot.
"""

from __future__ import annotations

import ast
import math

import numpy as np

_FUNCS = {
    n: getattr(np, n)
    for n in (
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "log",
        "log10",
        "sqrt",
        "abs",
        "sign",
        "minimum",
        "maximum",
        "floor",
        "ceil",
        "heaviside",
        "hypot",
        "clip",
        "where",
    )
}
_CONSTS = {"pi": math.pi, "e": math.e}
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Compare,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
)


class TimeExpression:
    """``f(t)`` from arithmetic expressions of ``t`` (one per component, or one giving a list):
    numbers, ``+ - * / ** %``, comparisons, ``a if c else b``, ``pi``, ``e`` and the numpy
    functions of :data:`_FUNCS`. Nothing else is allowed (no attributes, no other names), so a
    model file cannot run arbitrary code. A :class:`TimeFunction` built on one can be saved."""

    def __init__(self, expression: str | list[str]) -> None:
        self.expression = expression
        exprs = [expression] if isinstance(expression, str) else list(expression)
        self._code = [self._compile(e) for e in exprs]

    @staticmethod
    def _compile(text: str):
        try:
            tree = ast.parse(str(text), mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"expression {text!r}: {exc.msg}") from None
        for node in ast.walk(tree):
            if not isinstance(node, _NODES):
                raise ValueError(f"expression {text!r}: {type(node).__name__} is not allowed")
            if (
                isinstance(node, ast.Name)
                and node.id not in _FUNCS
                and node.id not in _CONSTS
                and node.id != "t"
            ):
                raise ValueError(f"expression {text!r}: unknown name {node.id!r}")
            if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCS
            ):
                raise ValueError(f"expression {text!r}: only the functions {sorted(_FUNCS)}")
        return compile(tree, "<expression>", "eval")

    def __call__(self, t: float):
        env = {"__builtins__": {}, **_FUNCS, **_CONSTS, "t": t}
        vals = [eval(c, env) for c in self._code]  # noqa: S307 - AST checked above
        if isinstance(self.expression, str):
            return np.asarray(vals[0], dtype=float).reshape(-1)
        return np.array(vals, dtype=float).reshape(-1)

    def __repr__(self) -> str:
        return f"TimeExpression({self.expression!r})"
