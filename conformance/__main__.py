"""`python -m conformance`: the suite's command line (see `cli`)."""

import sys

from conformance import cli

sys.exit(cli.main())
