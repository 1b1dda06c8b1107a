"""``python -m inductor_lens``: the same as the ``inductor-lens`` command."""

import sys

from .views.cli import main

if __name__ == "__main__":
    sys.exit(main())
