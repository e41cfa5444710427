"""The llm engine's model access: litellm + instructor client, retry, cache, token budget (DESIGN.md "Layout").

One job per module:

* ``seam``     the ``LLM`` protocol the stages receive: ``complete(messages, response_model, *, stage)``, and
               ``model_for(config)``: the model a model string names
* ``client``   ``LiteLLMClient``: instructor over ``litellm.completion``, masking, usage and cost
* ``agents``   ``AgentCLI``: the user's agent CLI (``agent:claude-code``, …) as the model, no litellm needed
* ``fake``     ``FakeLLM``: queued answers, answers keyed by stage, a history of calls
* ``retry``    tenacity transport retries and the mapping of provider errors to ``errors``
* ``errors``   ``LLMUnavailable``, ``LLMCallFailed``, ``LLMInvalidOutput``, ``BudgetExceeded``
* ``prompts``  sandboxed, strict Jinja2 rendering of ``prompts/*.j2`` and the tagged prompt hash
* ``cache``    diskcache of validated answers, keyed by tagged hash + masked input, deliberate eviction
* ``sqlcache`` the same cache in one SQLite file, when diskcache is not installed
* ``ledger``   the tokens a model spent, per store (``.duck-tape/.llm-usage.jsonl``), for ``duck-tape status``
* ``budget``   tiktoken counts (offline) and the per-run token cap
* ``usage``    requests, cache hits, tokens sent/received, litellm's cost estimate
* ``call``     ``Session.ask``: render -> mask -> cache -> cap -> complete, the one way a stage calls a model
* ``_litellm`` the only import of litellm/instructor, with the offline settings of STACK.md

Importing this package (or any module but ``_litellm``) does not import litellm.
"""

from pipeline.llm.errors import BudgetExceeded, LLMCallFailed, LLMError, LLMInvalidOutput, LLMUnavailable
from pipeline.llm.fake import FakeLLM
from pipeline.llm.seam import LLM
from pipeline.llm.usage import Usage

__all__ = [
    "LLM",
    "FakeLLM",
    "Usage",
    "LLMError",
    "LLMUnavailable",
    "LLMCallFailed",
    "LLMInvalidOutput",
    "BudgetExceeded",
]
