"""Per-run accounting of LLM calls: requests, cache hits, tokens sent/received, cost (issue 4, item 4).

Token counts are the provider's own (``usage`` of each response); when a response has no usage block the
prompt is counted with tiktoken instead (``estimated`` is then true).  Cost is litellm's estimate from its
bundled price map (``litellm.completion_cost``), in US dollars; None when litellm knows no price for the model
(a local server, a stand-in).  A cached answer costs nothing and counts under ``cached``.  An agent CLI
(``pipeline.llm.agents``) bills the user's own plan: its counters carry a ``billing`` note instead of a cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Usage:
    """Counters of one run.  ``requests``: HTTP calls answered; ``failed``: HTTP calls that raised (retried or
    not); ``cached``: answers taken from the cache; ``sent``/``received``: tokens; ``cost``: USD or None;
    ``billing``: what the summary says in place of a cost (None: litellm's estimate)."""

    requests: int = 0
    failed: int = 0
    cached: int = 0
    sent: int = 0
    received: int = 0
    cost: float | None = None
    estimated: bool = False
    stages: dict[str, int] = field(default_factory=dict)
    billing: str | None = None

    @property
    def tokens(self) -> int:
        """Tokens sent plus received so far (what ``--max-tokens`` caps)."""
        return self.sent + self.received

    def add(self, *, sent: int, received: int, cost: float | None = None, stage: str = "", estimated: bool = False) -> None:
        """Count one answered request of ``stage``."""
        self.requests += 1
        self.sent += max(sent, 0)
        self.received += max(received, 0)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        self.estimated = self.estimated or estimated
        if stage:
            self.stages[stage] = self.stages.get(stage, 0) + 1

    def summary(self, model: str, prompts: str | None = None) -> str:
        """One stderr line: ``duck-tape: llm: <model>: N request(s), N cached, N tokens sent, N received, cost …``."""
        if self.billing:
            cost = self.billing
        elif self.cost is not None:
            cost = f"est. cost ${self.cost:.4f} (litellm)"
        elif self.requests:
            cost = "cost unknown (litellm has no price for this model)"
        else:
            cost = "no cost"
        approx = " (estimated)" if self.estimated else ""
        failed = f", {self.failed} failed" if self.failed else ""
        tag = f", prompts {prompts}" if prompts else ""
        return (
            f"duck-tape: llm: {model}: {self.requests} request(s){failed}, {self.cached} cached, "
            f"{self.sent:,} tokens sent, {self.received:,} received{approx}, {cost}{tag}"
        )
