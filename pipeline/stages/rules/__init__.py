"""The deterministic rules engine behind ``distil`` (DESIGN.md "Stages": engine **rules**).

One module per job, all pure and free of pydantic in their loops:

* ``text``      sentence spans, clipping, normalized keys, timestamps, verbatim quotes
* ``scan``      one pass over the events: indexes by kind, call -> result links, timestamp lookup
* ``tools``     which tool calls edit files, run tests/builds, commit
* ``workflow``  Approved Workflow (the user's tasks in order, a command template's arguments, approved plans)
* ``episodes``  the session cut into requests (a prompt, its work, its outcome) and the state each ended in
* ``position``  Position: ``current`` (the last episode's state), ``done`` (tool outcomes), ``remaining``
* ``catalog``   the catalogue of decision phrasings (triggers, which side the option is on, what they need)
* ``clauses``   clause parsing of a decision sentence: option, alternative, reasoning
* ``phrases``   decisions in a text: explicit markers, implicit phrasings, dead ends, with their guards
* ``proposals`` what an assistant message proposes (options, recommendations, "Shall I…?")
* ``approvals`` user replies: approval of a proposal, option picks, rejections, instructions
* ``decisions`` the Decision Log: collect, resolve pronouns, dedupe, reversals
* ``facts``     Established Facts: constraints, sub-agent findings, root causes, quirks
* ``rederive``  Re-derivation: transcript path, files to read, commands to run
"""
