"""Record the llm engine's eval cassettes (``fixtures/cassettes/evals/``) against the local stand-in.

    .venv/bin/python tests/record_eval_cassettes.py [SUITE.yaml ...]   (default: every evals/suites/*.yaml)

For each case transcript, the stand-in (``tests/standin_server.py``, 127.0.0.1 only) answers the llm engine's calls
with what the **rules engine** found in that transcript, masked like the requests:

* ``distil_chunk``  -> the rules engine's decisions and facts whose evidence lies in the chunk's events;
* ``merge_findings`` -> the findings it was sent, unchanged;
* ``weave_state``   -> the rules engine's Approved Workflow and Position.

So the replayed llm row of ``duck-tape eval`` measures the llm pipeline with a stand-in that knows what the rules
engine knows, not a model.  Cassettes are named by the transcript's content hash (``evals.llm_replay``), so a
changed fixture needs a new recording; with the default suites, cassettes no case uses any more are removed.  Not a test (no ``test_`` prefix).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from standin_server import StandIn, answer  # noqa: E402

_LINE = re.compile(r"^\[(\d+)\] ", re.MULTILINE)


def _masked(value: dict) -> dict:
    from pipeline.redact import mask

    text, _ = mask(json.dumps(value, ensure_ascii=False), placeholder="<REDACTED>", deep=True)
    return json.loads(text)


def _plain(entry, drop: str | None = None) -> dict:
    """``entry`` (a ``pipeline.state.model`` dataclass) as a JSON-ready dict, without the field ``drop``."""
    value = dataclasses.asdict(entry)
    value.pop(drop, None)
    return value


def answer_for(name: str, user: str, rules) -> dict:
    """The answer, masked, to the call whose response model is ``name`` (ChunkFindings, MergedFindings,
    WovenSections) and whose user message is ``user``, from the rules distillate ``rules``.  Also used by
    ``tests/record_agent_cli.py``."""
    if name == "ChunkFindings":
        fenced = user.split("<transcript>\n", 1)[1].split("\n</transcript>", 1)[0]
        indexes = {int(n) for n in _LINE.findall(fenced)}
        keep = lambda e: e.evidence is not None and e.evidence.event_index in indexes  # noqa: E731
        value = {"decisions": [_plain(d, drop="origin") for d in rules.decisions if keep(d)],
                 "facts": [_plain(f) for f in rules.facts if keep(f)]}
    elif name == "MergedFindings":
        value = json.loads(user.split("<findings>\n", 1)[1].split("\n</findings>", 1)[0])
    elif name == "WovenSections":
        value = {"approved_workflow": rules.approved_workflow, "position": _plain(rules.position)}
    else:
        raise ValueError(f"unexpected call with response model {name!r}")
    return _masked(value)


def responder(rules):
    """A stand-in step builder answering each call from the rules distillate ``rules``."""

    def respond(body: dict):
        name = (body.get("tools") or [{}])[0].get("function", {}).get("name", "")
        user = body["messages"][1]["content"] if len(body.get("messages", [])) > 1 else ""
        return answer(answer_for(name, user, rules))

    return respond


def record(suite_paths: list[str]) -> list[Path]:
    """Record one cassette per case transcript of the suites; return the cassettes written."""
    from evals import llm_replay
    from evals.runner import NOW, transcript_path
    from evals.suite import load_suite
    from pipeline.recovery import recover
    from pipeline.stages import distil
    from pipeline.transcripts import read_transcript

    written: list[Path] = []
    llm_replay.CASSETTE_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="duck-tape-record-") as scratch:
        for suite_path in suite_paths:
            for case in load_suite(suite_path).cases:
                path = transcript_path(case, Path(scratch))
                cassette = llm_replay.cassette_for(path)
                cassette.unlink(missing_ok=True)
                rules = distil.run(read_transcript(path, warn=False))
                with StandIn() as server:
                    server.script(*[responder(rules)] * 200)
                    with llm_replay.vcr("all").use_cassette(str(cassette)):
                        result = recover(path, now=NOW, mask=True, config=llm_replay.replay_config(server.url),
                                         action="eval")
                if result.run is None or result.run.usage is None or result.run.usage.failed:
                    raise SystemExit(f"{case.id}: a call failed while recording: {result.notes}")
                print(f"{case.id}: {cassette.name}: {len(server.requests)} request(s); {result.state.trigger}")
                written.append(cassette)
    return written


def main(argv: list[str]) -> None:
    from evals import llm_replay

    suites = argv or sorted(str(p) for p in (ROOT / "evals" / "suites").glob("*.yaml"))
    written = record(suites)
    if not argv:
        for old in llm_replay.CASSETTE_DIR.glob("*.yaml"):
            if old not in written:
                old.unlink()
                print(f"removed stale {old.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
