"""``duck-tape mcp``: the workspace's state files, decisions and recovery as MCP tools (issue 16).

* ``tools`` — what each tool answers, as plain dicts (no MCP import; tested directly).
* ``agent_state`` — the agent as the model (issue 25): ``raw_material`` and ``save_state``, as plain functions.
* ``mcp`` — the stdio server built with the official ``mcp`` SDK (imported only by ``duck-tape mcp``).
"""
