"""titopfmu's version, in a module that imports nothing: the modules that name it (FMU
descriptions, the FMU cache key, SSP files, campaign workers, ``titopfmu --version``) import it
from here, not from the package's ``__init__`` (the public API, which imports everything: that
import made cycles)."""

__version__ = "0.1.0"
