"""``python -m alkstore_worker``: the same commands as ``alkstore worker`` and ``alkstore jobs``."""

import sys

from alkstore_worker.cli import main

sys.exit(main())
