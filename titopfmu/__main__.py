"""``python -m titopfmu ...``: the ``titopfmu`` command."""

import sys

from .cli import main

sys.exit(main())
