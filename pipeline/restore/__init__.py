"""Close the loop after compaction (issue 7): a budgeted handoff into the next session, and a read-only
reconciliation of the state file with the workspace.

* ``fit``       — what a piece of text costs in the output (UTF-8 bytes, or bytes inside a JSON string), shortening
  to a byte limit, and the greedy selection of a part's items under a budget;
* ``parts``     — the state file's content as handoff parts in priority order (constraint lines recognised here);
* ``handoff``   — the handoff text, fitted to the budget to the byte, wrapped as the Claude Code ``SessionStart``
  hook JSON or printed plain;
* ``reconcile`` — commits since the state file's ``Created`` time and the files it names, compared with the
  Remaining items (read-only: ``git log`` and ``stat`` only);
* ``run``       — ``duck-tape restore`` as a hook process: never fails, prints nothing when there is nothing to restore.

Light package (hook path): standard library, ``orjson`` and the pydantic-free state reader
(``pipeline.state.sections``) only; no LLM, no click.
"""
