"""``duck-tape batch``: re-distil an archive of old transcripts into state files (DESIGN.md job 2; issue 6).

* ``discover``  — find transcripts in files and folders; link Claude Code sub-agent files to their parent;
* ``subagents`` — read sub-agent files and add their final answer to the parent session when it is missing;
* ``cache``     — results keyed by transcript content + engine + configuration (reruns do no work), and the
  index that serves a rerun from one read;
* ``worker``    — one session: read, link, distil with the chosen engine, weave, validate, redact;
* ``runner``    — the whole run: cache lookups, a process pool (rules) or threads (llm);
* ``outputs``   — the state files in the output folder (left untouched when unchanged);
* ``progress``  — a rich progress bar on a terminal, plain lines otherwise;
* ``report``    — the markdown and JSON report; ``merge`` — ``--merge CONTEXT.md``.
"""
