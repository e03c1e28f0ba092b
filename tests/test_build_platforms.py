"""The platforms a build includes: ``titopfmu build`` without MinGW-w64 says that the FMUs carry
no Windows binaries, and the per-user FMU cache keeps FMUs with and without them (and FMI 2.0
and 3.0 ones) in separate folders, so that a cache filled before MinGW-w64 was installed is not
taken for one with Windows binaries once it is, nor the reverse.

MinGW-w64 is made absent in process by pointing the name of its compiler
(``titopfmu.fmi.native.build.MINGW``) at nothing, as on a machine without it. The tests that
need it present skip, visibly, without it. Each builds the smallest FMU
(``TitopJointSpringDamper``) only.
"""

from __future__ import annotations

import shutil

import pytest

from titopfmu.cli import main
from titopfmu.fmi import cache
from titopfmu.fmi.build import (
    build_notice,
    fmu_platforms,
    platforms,
    win64_default,
    win64_notice,
)
from titopfmu.fmi.cache import cache_key, cached_fmus, cached_variants
from titopfmu.fmi.native import build as native

HAVE_MINGW = shutil.which(native.MINGW) is not None
needs_mingw = pytest.mark.skipif(
    not HAVE_MINGW, reason="no MinGW-w64 cross compiler (apt-get install gcc-mingw-w64-x86-64)"
)
ABSENT = "titopfmu-test-no-such-x86_64-w64-mingw32-gcc"
FMU = "TitopJointSpringDamper.fmu"


@pytest.fixture
def no_mingw(monkeypatch):
    """MinGW-w64 absent: its compiler's name found nowhere on the PATH."""
    monkeypatch.setattr(native, "MINGW", ABSENT)


def test_without_mingw_the_notices_say_that_no_windows_binaries_are_included(no_mingw):
    assert not win64_default()
    assert platforms() == ("linux64",) and platforms(fmi_version=3) == ("x86_64-linux",)
    assert win64_notice() == (
        "no win64 binaries: the FMUs carry binaries/linux64 only (MinGW-w64's "
        f"{ABSENT} is not on the PATH; install it, e.g. apt-get install gcc-mingw-w64-x86-64, "
        "for FMUs that also run on Windows)"
    )
    assert win64_notice(fmi_version=3).startswith(
        "no x86_64-windows binaries: the FMUs carry binaries/x86_64-linux only (MinGW-w64's"
    )
    assert win64_notice(win64=False) == (
        "no win64 binaries: the FMUs carry binaries/linux64 only (not asked for (win64=False))"
    )
    assert build_notice(3, "d", 1).startswith("building 3 FMUs (FMI 2.0, linux64) into d ")


def test_with_win64_there_is_nothing_to_say_and_both_platforms_are_announced():
    assert win64_notice(win64=True) is None
    assert platforms(True) == ("linux64", "win64")
    assert platforms(True, 3) == ("x86_64-linux", "x86_64-windows")
    assert win64_default(True) and not win64_default(False)
    assert win64_default() == HAVE_MINGW
    assert (win64_notice() is None) == HAVE_MINGW


def test_the_cache_key_names_the_fmi_version_and_the_platforms(monkeypatch):
    k = cache_key
    assert k(True).endswith("-fmi2-linux64+win64") and k(False).endswith("-fmi2-linux64")
    assert k(True, 3).endswith("-fmi3-x86_64-linux+x86_64-windows")
    assert k(False, 3).endswith("-fmi3-x86_64-linux")
    assert len({k(True), k(False), k(True, 3), k(False, 3)}) == 4
    assert k() == k(HAVE_MINGW)
    monkeypatch.setattr(native, "MINGW", ABSENT)
    assert k() == k(False)
    with pytest.raises(ValueError, match="fmi_version must be 2 or 3"):
        k(True, 4)


def test_build_without_mingw_says_so_before_and_after(tmp_path, capsys, no_mingw):
    assert main(["build", "--out", str(tmp_path), "--type", "joint_spring_damper",
                 "--no-validate", "--no-progress"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"titopfmu: {build_notice(1, tmp_path, win64=False)}",
        f"titopfmu: {win64_notice()}",
    ]
    assert "(FMI 2.0, linux64) into" in err and "no win64 binaries" in err
    assert out == f"built 1 FMU in {tmp_path} (binaries: linux64 only, no win64)\n"
    assert fmu_platforms(tmp_path / FMU) == ("linux64",)


@needs_mingw
def test_build_with_mingw_includes_and_announces_the_windows_binaries(tmp_path, capsys):
    assert main(["build", "--out", str(tmp_path), "--type", "joint_spring_damper",
                 "--no-progress"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert err == f"titopfmu: {build_notice(1, tmp_path, win64=True)}\n"
    assert "(FMI 2.0, linux64 + win64) into" in err
    assert out == (
        f"built 1 FMU in {tmp_path} (binaries: linux64 + win64); fmpy validator: 0 problems\n"
    )
    assert fmu_platforms(tmp_path / FMU) == ("linux64", "win64")


@needs_mingw
def test_the_cache_never_mixes_fmus_with_and_without_windows_binaries(tmp_path, monkeypatch):
    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path))
    # the sources' hash held: other edits to the sources during the test do not move the folders
    fixed = cache.sources_hash()
    monkeypatch.setattr(cache, "sources_hash", lambda: fixed)
    wanted = [("joint_spring_damper", 0)]
    said: list[str] = []

    # a cache filled as before MinGW-w64 was installed (win64 forced off through the API)
    bare = cached_variants(wanted, notice=said.append, win64=False)
    assert bare.name == cache_key(False) and fmu_platforms(bare / FMU) == ("linux64",)
    assert len(said) == 1 and "(FMI 2.0, linux64) into" in said[0]
    stamp = (bare / FMU).stat().st_mtime_ns

    full = cached_variants(wanted, notice=said.append)  # MinGW-w64 now there: built afresh
    assert full != bare and full.name == cache_key(True)
    assert fmu_platforms(full / FMU) == ("linux64", "win64")
    assert len(said) == 2 and "(FMI 2.0, linux64 + win64) into" in said[1]
    assert fmu_platforms(bare / FMU) == ("linux64",)  # the other set left as it was

    # each set is reused where it fits, with no build and no notice
    assert cached_fmus(["joint_spring_damper"], notice=said.append) == full
    assert cached_variants(wanted, notice=said.append, win64=False) == bare
    with monkeypatch.context() as m:
        m.setattr(native, "MINGW", ABSENT)
        assert cached_variants(wanted, notice=said.append) == bare
        assert cached_fmus(["joint_spring_damper"], notice=said.append) == bare
    assert len(said) == 2 and (bare / FMU).stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.joinpath("fmus").iterdir()) == sorted(
        [cache_key(False), cache_key(True)]
    )
