"""``duck-tape mcp``: the workspace's state files, decisions and recovery as MCP tools (issue 16).

* ``tools`` — what each tool answers, as plain dicts (no MCP import; tested directly).
* ``mcp`` — the stdio server built with the official ``mcp`` SDK (imported only by ``duck-tape mcp``).
"""
