"""The llm engine behind ``distil``/``weave`` (DESIGN.md "Stages": engine **llm**; issue 4).

* ``condense`` the transcript as numbered lines, trimmed and deduplicated, split into chunks by token budget
* ``schemas``  response models of the calls, built from the Agent State models
* ``merge``    deterministic merge of chunk findings (dedupe, later supersedes earlier)
* ``ground``   screening of model-written entries (grounding, source, prompt injection, support)
* ``engine``   ``run(transcript, session, config=, rules=)``: the calls and the per-section fallback

``pipeline.engines`` chooses between this engine and the rules engine and assembles the result.
"""
