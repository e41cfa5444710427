"""Structural guards against superlinear steps in the rules engine (issue 11 part 4): work is counted, never timed.

A 4.9 MB transcript of user prose took 51 s to checkpoint: every constraint-like sentence of every prompt was
compared with every one kept before it (facts dedupe, n² comparisons).  ``SimilarIndex`` answers as that loop did
while comparing only sets that share a rare token.
"""

from __future__ import annotations

import random

import pytest

from pipeline.stages.rules import facts as facts_mod
from pipeline.stages.rules.scan import scan
from pipeline.stages.rules.text import SimilarIndex, similar
from rules_builder import B

THRESHOLDS = [(0.7, 0.85), (0.8, 0.9), (0.5, 0.6), (0.6, 0.8), (0.9, 0.5)]


@pytest.mark.parametrize("jaccard,contain", THRESHOLDS)
def test_similar_index_answers_as_the_plain_loop(jaccard, contain):
    for trial in range(300):
        rng = random.Random(trial)
        vocab = [f"w{i}" for i in range(rng.randint(2, 30))]
        rank = {} if trial % 3 == 0 else {w: rng.randint(0, 5) for w in vocab}
        index = SimilarIndex(jaccard=jaccard, contain=contain, rank=rank)
        kept: list[frozenset[str]] = []
        for _ in range(rng.randint(1, 40)):
            s = frozenset(rng.sample(vocab, rng.randint(0, min(len(vocab), 12))))
            naive = any(similar(s, k, jaccard=jaccard, contain=contain) for k in kept)
            assert index.has_similar(s) == naive, (trial, sorted(s))
            if not naive or rng.random() < 0.3:
                kept.append(s)
                index.add(s)


def test_similar_index_compares_far_fewer_than_all_pairs():
    """5,000 distinct sentences sharing common words (as prose does): a plain loop makes ~12.5 M comparisons."""
    rng = random.Random(3)
    common = ["must", "keep", "code", "job", "depend", "production"]
    sets = [frozenset(rng.sample(common, 4) + [f"rare{n}a", f"rare{n}b", f"rare{n}c", f"rare{n}d"]) for n in range(5000)]
    df: dict[str, int] = {}
    for s in sets:
        for t in s:
            df[t] = df.get(t, 0) + 1
    index = SimilarIndex(jaccard=0.7, contain=0.85, rank=df)
    for s in sets:
        assert not index.has_similar(s)
        index.add(s)
    assert index.checked < 10 * len(sets)


def test_facts_dedupe_of_many_prompts_goes_through_the_index(monkeypatch):
    """Many long prompts, each with its own constraint sentences: the Established Facts dedupe compares a bounded
    number of sets per sentence, and still drops a near duplicate of an early sentence stated at the end."""
    made: list[SimilarIndex] = []

    class Counting(SimilarIndex):
        def __init__(self, **kw):
            super().__init__(**kw)
            made.append(self)

    monkeypatch.setattr(facts_mod, "SimilarIndex", Counting)
    rng = random.Random(5)
    words = [f"{a}{b}" for a in ("inv", "led", "ten", "quo", "web", "cur", "sha", "rep") for b in ("ox", "ar", "el", "um")]
    b = B()
    b.user("Never push to main directly; open a PR for the rate limiter.")
    sentences = 0
    for n in range(400):
        parts = [f"We must keep the {rng.choice(words)} {rng.choice(words)} module{n} code because job{n} depends on it."
                 for _ in range(3)]
        b.user(" ".join(parts) + " Can you look into how that works?")
        b.asst("Looking into it.")
        sentences += 3
    b.user("never push to main directly, open a PR for the rate limiter")
    s = scan(b.build())
    cands = facts_mod.propose(s)
    assert len(made) == 1
    assert made[0].checked < 40 * sentences  # a plain loop: ~720,000
    pushes = [c for c in cands if "push to main" in c.text.lower()]
    assert len(pushes) == 1 and pushes[0].restated == s.users[-1]  # one line, restated at the end


def test_each_prompt_is_screened_once_per_distil(monkeypatch):
    """Workflow and Current both ask for the task prompts: the own-words screen (costly on long prose) runs at most
    once per prompt, not once per asker."""
    from pipeline.stages import distil
    from pipeline.stages.rules import workflow

    calls: list[str] = []
    real = workflow.task_text

    def counting(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(workflow, "task_text", counting)
    b = B()
    for n in range(30):
        b.user(f"Please add the export step number {n} to the nightly job and keep the old one.")
        b.asst("Looking into it.")
    distil.run(b.build())
    assert calls and len(calls) == len(set(calls)) <= 30
