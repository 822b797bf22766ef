"""``python -m seqlab.cli``: the ``seqlab`` command."""
import sys

from seqlab.cli import main

sys.exit(main())
