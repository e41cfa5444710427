"""Background refinement of a checkpoint's state with the model (issue 25), opt-in (``refine = true``).

* ``spawn``  the hook side: decide cheaply whether to refine, start the detached job, return at once
* ``job``    the job: guards, lock, caps, the llm engine on the transcript, the ``-recovered`` file, the ledger
* ``keep``   writing a model-made state for a session: keep what its checkpoint carried, find a free file name
"""
