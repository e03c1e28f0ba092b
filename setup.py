"""Build of the C core's Python extension (the rest of the metadata is in pyproject.toml).

``pip install`` compiles ``titopfmu/core/csrc`` (C99, libm) into ``titopfmu.core._titop`` with
the compiler Python was built with. A failed compile stops the install with the compiler's own
message and what to install.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CSRC = os.path.join("titopfmu", "core", "csrc")


class BuildCore(build_ext):
    """build_ext that says what to install when the C compiler is missing or fails."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # distutils raises several types (CompileError, PlatformError..)
            sys.stderr.write(
                "\n*** titopfmu: could not compile its C core (titopfmu/core/csrc). It needs a C99 "
                "compiler and the Python headers:\n"
                "***   Debian/Ubuntu: apt-get install gcc python3-dev\n"
                "***   Fedora: dnf install gcc python3-devel;  macOS: xcode-select --install;\n"
                "***   Windows: Microsoft C++ Build Tools.\n"
                f"*** The compiler said: {exc}\n\n"
            )
            raise

    def copy_file(self, infile, outfile, *args, **kwargs):
        """Put a built extension in place by renaming a complete copy over it (``pip install
        -e .`` copies the extensions into the source tree): a program running from the old file
        keeps its mapping, where writing the file over in place would change the code under it
        (and crash it)."""
        tmp = f"{outfile}.{os.getpid()}.tmp"
        try:
            result = super().copy_file(infile, tmp, *args, **kwargs)
            os.replace(tmp, outfile)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return outfile, result[1]


# warnings shown, not fatal, for users (a newer compiler may warn); the tests compile the core
# with -Werror (tests/test_build.py, tests/test_core_memory.py)
flags = [] if sys.platform == "win32" else ["-std=c99", "-O3", "-Wall", "-Wextra"]
core = Extension(
    "titopfmu.core._titop",
    sources=[os.path.join(CSRC, f) for f in ("_titop.c", "titop_double.c", "titop_complex.c")],
    include_dirs=[CSRC],
    depends=[
        os.path.join(CSRC, f)
        for f in ("titop.h", "titop_core.c", "titop_spatial.h", "titop_scalar.h")
    ],
    extra_compile_args=flags,
    libraries=[] if sys.platform == "win32" else ["m"],
)

# the co-simulation master's compiled communication step (titopfmu/master/fastpath.py); C99,
# no dependency on the core. -ffp-contract=off: no fused multiply-adds, so that it rounds like
# the master's Python path
step = Extension(
    "titopfmu.master._step",
    sources=[os.path.join("titopfmu", "master", "_step.c")],
    extra_compile_args=flags + ([] if sys.platform == "win32" else ["-ffp-contract=off"]),
    libraries=[] if sys.platform == "win32" else ["m"],
)

setup(ext_modules=[core, step], cmdclass={"build_ext": BuildCore})
