"""``python -m pipeline`` runs the duck-tape CLI."""

import sys

from pipeline.entry import main

sys.exit(main())
