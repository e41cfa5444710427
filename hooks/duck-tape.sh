#!/bin/sh
# Runs duck-tape for the Claude Code plugin's hooks: the one on PATH, else this plugin's own copy through uvx.
# A hook never fails Claude Code: without either, one line on stderr and exit 0.
if command -v duck-tape >/dev/null 2>&1; then
  exec duck-tape "$@"
fi
if command -v uvx >/dev/null 2>&1 && [ -n "${CLAUDE_PLUGIN_ROOT}" ]; then
  exec uvx --quiet --from "${CLAUDE_PLUGIN_ROOT}" duck-tape "$@"
fi
echo "duck-tape: not installed, so nothing was saved: run  pipx install '${CLAUDE_PLUGIN_ROOT:-/path/to/duck-tape}'  (or install uv)" >&2
exit 0
