"""``python -m af_core`` is ``afc``."""

import sys

from af_core.cli import main

sys.exit(main())
