"""``python -m pipeline`` runs the duck-tape CLI."""

import sys

from pipeline.cli import main

sys.exit(main())
