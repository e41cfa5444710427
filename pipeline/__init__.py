"""duck-tape pipeline: recover Agent State from coding-agent transcripts (see ../shared/DESIGN.md)."""

__version__ = "0.1.0"
