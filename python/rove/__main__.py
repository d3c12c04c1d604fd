"""``python -m rove`` is the ``rove`` command."""

import sys

from .cli import main

sys.exit(main())
