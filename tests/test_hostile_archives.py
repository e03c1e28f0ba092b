"""Hostile archives (issue 33, rows 7 and 8; "What to build" 4): every .ssp and .fmu is unpacked
by :func:`titopfmu.archives.extract`, bounded in expanded size, member count and per-member
compression ratio (settable: keyword, ``archives.bounded``, environment variables), refusing
encrypted members, absolute paths, ``..`` and symbolic links with one line naming the archive and
the member (a CosimError; ``titopfmu cosim`` prints it and exits with 2), and leaving nothing
behind: the temporary folder of a refused archive is removed.

Each test points ``tempfile`` at a folder of its own, so "nothing left behind" is checked on
that folder alone (other processes may use the system's temporary folder meanwhile). The FMUs
here are a model description without binaries: nothing is instantiated."""

from __future__ import annotations

import gc
import io
import random
import struct
import tempfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("fmpy", reason="the master needs fmpy (the 'fmi' extra)")

from titopfmu import archives  # noqa: E402
from titopfmu.cli import main  # noqa: E402
from titopfmu.master import CosimError, CoSimulation  # noqa: E402
from titopfmu.master.ssp import SSD_NAME, read_ssp  # noqa: E402

MD = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="tiny"
  guid="{00000000-0000-0000-0000-000000000033}">
  <CoSimulation modelIdentifier="tiny"/>
  <ModelVariables>
    <ScalarVariable name="y" valueReference="0" causality="output" variability="continuous"
      initial="exact"><Real start="0"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs></ModelStructure>
</fmiModelDescription>
"""

SSD = """<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription
  xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" version="1.0" name="t">
  <ssd:System name="t">
    <ssd:Elements>
      <ssd:Component name="a" type="application/x-fmu-sharedlibrary"
        source="resources/tiny.fmu"/>
    </ssd:Elements>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="0.1"/>
</ssd:SystemStructureDescription>
"""

BOMB = 64 << 20  # bytes of zeros: about 64 kB deflated (ratio about 1000)


@pytest.fixture(autouse=True)
def own_tempdir(tmp_path, monkeypatch):
    """tempfile (and so fmpy's and titopfmu's temporary folders) in a folder of this test."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    for name in archives.ENV.values():
        monkeypatch.delenv(name, raising=False)
    return folder


def _left(folder: Path) -> list[str]:
    gc.collect()  # a co-simulation read successfully removes its folder when collected
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _zip(path: Path, members: dict[str, bytes], bomb: str | None = None) -> Path:
    """A zip of ``members`` (name -> bytes, deflated), plus a member ``bomb`` of BOMB zeros."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        if bomb is not None:
            with z.open(bomb, "w") as f:
                block = bytes(1 << 20)
                for _ in range(BOMB >> 20):
                    f.write(block)
    return path


def _fmu(path: Path, extra: dict[str, bytes] | None = None, bomb: str | None = None) -> Path:
    return _zip(path, {"modelDescription.xml": MD.encode(), **(extra or {})}, bomb)


def _ssp(path: Path, fmu: bytes | None = None, extra: dict[str, bytes] | None = None,
         bomb: str | None = None) -> Path:  # fmt: skip
    if fmu is None:
        fmu = _fmu(path.with_suffix(".fmu")).read_bytes()
    return _zip(path, {SSD_NAME: SSD.encode(), "resources/tiny.fmu": fmu, **(extra or {})}, bomb)


def _flag_encrypted(path: Path, member: str) -> Path:
    """Set the 'encrypted' bit of ``member`` in its local header and central directory entry
    (the data stays as it is: Python's zipfile cannot write an encrypted member)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo(member)
    data[info.header_offset + 6] |= 1  # local file header: general purpose flag
    name = member.encode()
    pos = 0
    while (pos := data.find(b"PK\x01\x02", pos)) >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46 : pos + 46 + n]) == name:
            data[pos + 8] |= 1  # central directory entry: general purpose flag
            break
        pos += 4
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert z.getinfo(member).flag_bits & 1
    return path


def _one_line_refusal(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("titopfmu: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _cosim(ssp: Path, tmp_path: Path, capsys) -> str:
    """``titopfmu cosim SSP``: exit status 2, one line on stderr (returned), no CSV."""
    out = tmp_path / "out.csv"
    code = main(["cosim", str(ssp), "--out", str(out), "--quiet"])
    printed = capsys.readouterr()
    assert code == 2, (code, printed.err)
    assert not out.exists()
    return _one_line_refusal(printed.err)


def test_encrypted_member_of_an_ssp_is_refused_in_one_line(tmp_path, own_tempdir, capsys):
    """Before: RuntimeError traceback ('File ... is encrypted, password required')."""
    ssp = _flag_encrypted(_ssp(tmp_path / "enc.ssp", extra={"resources/notes.txt": b"x"}),
                          "resources/notes.txt")  # fmt: skip
    line = _cosim(ssp, tmp_path, capsys)
    assert str(ssp) in line and "'resources/notes.txt' is encrypted" in line, line
    with pytest.raises(CosimError, match="encrypted"):
        read_ssp(ssp)
    assert _left(own_tempdir) == []


def test_encrypted_member_of_an_fmu_is_refused(tmp_path, own_tempdir, capsys):
    fmu = _flag_encrypted(_fmu(tmp_path / "enc.fmu", {"resources/data.txt": b"x"}),
                          "resources/data.txt")  # fmt: skip
    with pytest.raises(CosimError) as err:
        CoSimulation().add("a", fmu)
    assert str(fmu) in str(err.value) and "'resources/data.txt' is encrypted" in str(err.value)
    line = _cosim(_ssp(tmp_path / "s.ssp", fmu=fmu.read_bytes()), tmp_path, capsys)
    assert "component 'a'" in line and "resources/tiny.fmu" in line and "encrypted" in line
    assert _left(own_tempdir) == []


def test_fmu_with_an_absolute_member_is_refused_and_leaves_nothing(tmp_path, own_tempdir, capsys):
    """Before: fmpy's extract raised a bare Exception ('Illegal path /abs.txt found in ...')
    through CoSimulation.add, a traceback from the command, and left its empty temporary
    folder."""
    fmu = _fmu(tmp_path / "abs.fmu", {"/abs.txt": b"x"})
    with pytest.raises(CosimError) as err:
        CoSimulation().add("a", fmu)
    assert str(err.value).count("\n") == 0
    assert str(fmu) in str(err.value) and "'/abs.txt' has an absolute path" in str(err.value)
    assert _left(own_tempdir) == []
    line = _cosim(_ssp(tmp_path / "abs.ssp", fmu=fmu.read_bytes()), tmp_path, capsys)
    assert "abs.ssp" in line and "resources/tiny.fmu" in line and "/abs.txt" in line, line
    assert _left(own_tempdir) == []


def test_zip_bomb_in_an_ssp_is_refused_before_it_is_written(tmp_path, own_tempdir, capsys):
    """Before: read_ssp wrote the 64 MiB member into the temporary folder and returned."""
    ssp = _ssp(tmp_path / "bomb.ssp", bomb="resources/bomb.bin")
    assert ssp.stat().st_size < 1 << 20
    line = _cosim(ssp, tmp_path, capsys)
    assert str(ssp) in line and "'resources/bomb.bin'" in line and "times" in line, line
    assert archives.ENV["max_ratio"] in line
    assert _left(own_tempdir) == []


def test_zip_bomb_in_an_fmu_inside_an_ssp_is_refused(tmp_path, own_tempdir, capsys):
    """Before: the SSP unpacked, then fmpy unpacked the FMU's 64 MiB member, read_ssp
    returned."""
    fmu = _fmu(tmp_path / "bomb.fmu", bomb="resources/zeros.bin")
    ssp = _ssp(tmp_path / "nested.ssp", fmu=fmu.read_bytes())
    line = _cosim(ssp, tmp_path, capsys)
    assert "nested.ssp" in line and "resources/tiny.fmu" in line and "zeros.bin" in line, line
    with pytest.raises(CosimError, match="zeros.bin"):
        CoSimulation().add("a", fmu)
    assert _left(own_tempdir) == []


def test_bounds_are_settable(tmp_path, own_tempdir, monkeypatch):
    """Member count and expanded size: refused past the bound set by the environment, accepted
    with a keyword (which wins) or ``archives.bounded``; a bad setting named in one line.
    Before: no bound (the archives were read whatever their size)."""
    many = _ssp(tmp_path / "many.ssp", extra={f"resources/f{i}.txt": b"x" for i in range(300)})
    digits = random.Random(33).choices(b"0123456789", k=2 << 20)  # deflates about 2.3 times
    big = _ssp(tmp_path / "big.ssp", extra={"resources/big.txt": bytes(digits)})
    for ssp in (many, big):
        cs, _ = read_ssp(ssp)  # the defaults: 10,000 members, 1 GiB, ratio 200
        del cs
    monkeypatch.setenv(archives.ENV["max_members"], "100")
    with pytest.raises(CosimError, match=r"302 members, more than the 100 allowed"):
        read_ssp(many)
    cs, _ = read_ssp(many, limits=archives.Limits(max_members=400))
    del cs
    with archives.bounded(max_members=400):
        cs, _ = read_ssp(many)
    del cs
    monkeypatch.setenv(archives.ENV["max_size"], "1.5M")
    with pytest.raises(CosimError, match=r"'resources/big.txt'.* more than 1.5 MiB"):
        read_ssp(big)
    monkeypatch.setenv(archives.ENV["max_size"], "lots")
    with pytest.raises(CosimError, match=archives.ENV["max_size"] + ".*'lots'"):
        read_ssp(big)
    monkeypatch.delenv(archives.ENV["max_size"])
    monkeypatch.setenv(archives.ENV["max_ratio"], "2")
    with pytest.raises(CosimError, match=r"'resources/big.txt' expands 2 times .* more than the 2"):
        read_ssp(big)
    assert archives.current_limits().max_ratio == 2.0
    assert _left(own_tempdir) == []


@pytest.mark.parametrize("case", ["dotdot", "symlink", "backslash", "drive"])
def test_members_that_would_land_elsewhere_are_refused(tmp_path, own_tempdir, case):
    """Before: zipfile stripped '..' and wrote a symbolic link as a file, silently."""
    if case == "symlink":
        info = zipfile.ZipInfo("resources/link")
        info.create_system = 3
        info.external_attr = 0o120777 << 16
        ssp = _ssp(tmp_path / "x.ssp")
        with zipfile.ZipFile(ssp, "a") as z:
            z.writestr(info, "/etc/passwd")
        member, why = "resources/link", "is a symbolic link"
    else:
        member, why = {
            "dotdot": ("resources/../../evil.txt", "'..'"),
            "backslash": ("resources\\evil.txt", "backslash"),
            "drive": ("C:/evil.txt", "absolute path"),
        }[case]
        ssp = _ssp(tmp_path / "x.ssp", extra={member: b"x"})
    with pytest.raises(CosimError) as err:
        read_ssp(ssp)
    msg = str(err.value)
    assert str(ssp) in msg and f"member '{member}'" in msg and why in msg, msg
    assert not (tmp_path / "evil.txt").exists()
    assert _left(own_tempdir) == []


def test_extract_is_all_or_nothing(tmp_path, own_tempdir):
    """A member whose data is corrupt (CRC) after good ones: the folder with the good ones is
    removed, the error names the member; a good archive gives a folder with every member."""
    good = _zip(tmp_path / "good.zip", {"a/b.txt": b"hello", "c.txt": b"world" * 100})
    folder = archives.extract(good, prefix="t_")
    assert folder.parent == own_tempdir
    assert (folder / "a" / "b.txt").read_bytes() == b"hello"
    assert (folder / "c.txt").read_bytes() == b"world" * 100
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:  # stored: the data is the bytes as written
        z.writestr("first.txt", b"fine")
        z.writestr("second.txt", b"ABCDEFGH")
    data = bad.read_bytes()
    bad.write_bytes(data.replace(b"ABCDEFGH", b"ABCDEFGX"))
    with pytest.raises(archives.ArchiveError, match=r"'second.txt' is corrupt \(CRC mismatch\)"):
        archives.extract(bad)
    assert _left(own_tempdir) == [folder.name, *(f"{folder.name}/{p}" for p in
                                                 ("a", "a/b.txt", "c.txt"))]  # fmt: skip
    with pytest.raises(archives.ArchiveError, match="not a readable zip archive"):
        archives.extract(tmp_path / "absent.zip")
