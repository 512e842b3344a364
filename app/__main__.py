import sys

from phonebuddy.cli import main

sys.exit(main())
