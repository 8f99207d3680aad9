"""``python -m crowdsteer.training.cli COMMAND ...``: the ``crowdsteer`` command."""

import sys

from . import main

sys.exit(main())
