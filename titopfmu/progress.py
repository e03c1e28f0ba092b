"""Progress output of the command line: bars on a terminal (the C core is compiled when the
package is installed: nothing compiles at run time)."""

from __future__ import annotations

import sys

#: A bar shows only once its run has lasted this long (s): short runs stay quiet.
BAR_DELAY = 1.0


def wanted(flag: bool | None) -> bool:
    """``--progress`` / ``--no-progress``, else on when stderr is a terminal."""
    if flag is not None:
        return flag
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def bar(total: float, desc: str, unit: str, enabled: bool):
    """A tqdm bar on stderr (shown after :data:`BAR_DELAY` s), or None when not ``enabled``."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, delay=BAR_DELAY, file=sys.stderr)
