"""The C core of titopfmu: the block equations and the loop sweep, written once (``csrc/``).

:mod:`titopfmu.core.model` turns a system's tree of built-in blocks into a core model; the
extension :mod:`titopfmu.core._titop` evaluates it.
"""
