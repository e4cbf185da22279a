"""``python -m alkstore_cli``: the ``alkstore`` command."""

import sys

from alkstore_cli.main import main

sys.exit(main())
