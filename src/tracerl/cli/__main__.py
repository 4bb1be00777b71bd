"""`python -m tracerl.cli ...`: the same as the `tracerl` command."""

import sys

from tracerl.cli import main

sys.exit(main())
