"""Probe-fact eval harness (DESIGN.md job 3 "Evals"; STYLE.md habit 11 "Evals are data").

* ``suite``      the YAML suite model (pydantic, ``extra="forbid"``) and its loader
* ``sections``   a state file's text cut into the views probes are checked against
* ``score``      per-probe verdicts, recall per kind and section, violations, decision precision
* ``engines``    the engine registry (name -> callable producing the state file and its AgentState)
* ``baseline``   today's keyword-only auto-checkpoint, re-implemented as the reference engine
* ``generated``  transcripts too large to commit, written at run time by ``fixtures/evals/generate.py``
* ``runner``     runs every case of the suites with every engine asked for
* ``report``     the markdown table, the failing probes, the raw JSON
* ``thresholds`` ``evals/thresholds.toml`` and the check ``make test`` and ``duck-tape eval`` apply
"""
