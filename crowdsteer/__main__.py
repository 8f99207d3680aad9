"""``python -m crowdsteer COMMAND ...``: the ``crowdsteer`` command line."""

import sys

from crowdsteer.training.cli import main

sys.exit(main())
