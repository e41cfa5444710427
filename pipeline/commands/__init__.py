"""CLI commands beyond the core three, one module per area, each exposing ``COMMANDS`` (click commands).

Registered in ``pipeline.cli.COMMAND_MODULES``.  Keep heavy imports inside the command functions.
"""
