"""`python -m reference_host serve --repo PATH`: same as the `asp-host` console script."""

import sys

from reference_host.cli import main

sys.exit(main())
