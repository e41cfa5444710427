"""Hook-side commands: the pre-compact checkpoint and the installation of the hooks that call it.

* ``payload``    — the JSON a harness writes on the hook's stdin (Claude Code, Copilot CLI, opencode plugin, Gemini, Codex);
* ``locate``     — find a session's transcript by session id in the harness's own folders;
* ``checkpoint`` — ``duck-tape checkpoint``: auto state file + marker, never fails the hook;
* ``install`` (with ``install_gemini``, ``install_codex``, ``install_copilot``, ``nudge_install``),
  ``opencode_plugin`` (its text in ``opencode_plugin.js``) — the hook configuration per harness;
* ``detect``, ``setup`` — ``duck-tape init``: which harnesses are in use, which file and command.

Sources: DESIGN.md "Agent State file (Tier 2)" (auto file, rotation, marker), "Approval" (the hook writes
without asking), "Exit codes"; FORMATS.md §1–3 (where each harness keeps its transcripts).
"""
