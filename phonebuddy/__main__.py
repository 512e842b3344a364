"""`python -m phonebuddy ...` is the `phonebuddy` command."""

import sys

from phonebuddy.cli import main

sys.exit(main())
