"""``python -m mklearn.cli``: the ``mklearn`` command."""

import sys

from mklearn.cli import main

sys.exit(main())
