"""FMI 2.0 co-simulation export of the TITOP blocks (needs the ``fmi`` extra: pythonfmu, fmpy).

:mod:`titopfmu.fmi.catalog` lists the FMU types and their parameters, :mod:`titopfmu.fmi.slave`
is the pythonfmu slave that wraps one core block, :mod:`titopfmu.fmi.build` writes the FMUs.
"""
