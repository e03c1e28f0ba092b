"""FMI 2.0 export of the TITOP blocks: native FMUs (co-simulation and model exchange).

:mod:`titopfmu.fmi.catalog` lists the FMU types and their parameters, :mod:`titopfmu.fmi.ports`
their port variables, :mod:`titopfmu.fmi.native` the FMI wrapper in C and its generated
configuration, :mod:`titopfmu.fmi.build` writes the FMUs (``titopfmu build``).
"""
