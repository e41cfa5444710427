"""What a compaction kept and what it lost (issue 17): pure functions, the CLI only prints.

A harness that compacts writes its own summary into the transcript and keeps the events before it.  The rules
engine extracts entries from those events (Decision Log with status, Established Facts, constraints, Remaining,
the workflow's tasks); an entry is **kept** when the summary carries it, **lost** otherwise:

* ``terms``    — the distinctive terms of an entry (identifiers, paths, numbers, names), at most three;
* ``summary``  — the summary cut into units (one line each, with the heading above it) and the matcher: every
  term of the entry in one unit, case-insensitive, whitespace-normalised, never inside a longer word (the eval
  probes' rule, ``evals.score.occurs``); a REJECTED entry also needs a rejection word in that unit or its heading;
* ``entries``  — a state's entries as ``Entry`` values, each with its kind, evidence and terms;
* ``compare``  — one ``Check`` per compaction (its entries against its summary), ``verify`` for a transcript;
* ``render``   — the text and JSON reports;
* ``delta``    — a state file's entries split by the last compaction's summary (what ``restore`` leaves out and
  puts first, issue 17 item 2); ``tail`` — that summary read from the end of a transcript file, cheaply.
"""
