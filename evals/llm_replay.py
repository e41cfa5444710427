"""The ``llm`` engine of the eval harness: live with a configured model, else replayed from cassettes (issue 4).

* **Live** — when a model is configured (``DUCK_TAPE_MODEL``, or ``model`` in the config file): a real recovery
  with ``--engine llm`` against that model (``pipeline.recovery.recover``, ``action="eval"``).  This is what
  measures a model.
* **Replay** — otherwise: the same recovery through litellm + instructor, with the HTTP exchanges played from
  ``fixtures/cassettes/evals/<stem>-<sha256 of the transcript, 12 hex>.yaml``.  Those cassettes were recorded
  (``tests/record_eval_cassettes.py``) against the local stand-in answering with what the *rules engine* found in
  that transcript, masked.  So the replayed llm row checks the llm pipeline end to end — chunking, masking, the
  request and answer shapes, grounding, merging, per-section fallback — with a stand-in that knows exactly what the
  rules engine knows.  It says nothing about a real model's quality, and should score close to the rules row.

Replay matches requests on method and path, in order (not on the body, so a prompt wording change does not break
the eval; the unit cassettes of ``tests/test_llm_cassettes.py`` pin the body).  A cassette not fully played, or a
request it cannot answer, is an error for that case: re-record.  Recorded request bodies are stored as their
SHA-256 and length only, after checking that the deep redaction scan finds nothing in them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from datetime import datetime
from pathlib import Path



def _root() -> Path:
    """The data root (``pipeline.resources``): the checkout, or the package data of an installed copy."""
    from pipeline.resources import PackagingError, data_root

    try:
        return data_root()
    except PackagingError:
        return Path(__file__).resolve().parent.parent


ROOT = _root()
CASSETTE_DIR = ROOT / "fixtures" / "cassettes" / "evals"
REPLAY_MODEL = "openai/gpt-4o-mini"
REPLAY_BASE = "http://127.0.0.1:8000/v1"
_STANDIN_URI = re.compile(r"//127\.0\.0\.1:\d+/")
_KEPT_HEADERS = frozenset({"content-type", "accept"})


class LeakInRequest(AssertionError):
    """A request body about to be recorded holds something the deep redaction scan flags."""


def cassette_for(path: str | Path) -> Path:
    """The cassette of the transcript at ``path``: named by its stem and the SHA-256 of its bytes (12 hex)."""
    data = Path(path).read_bytes()
    return CASSETTE_DIR / f"{Path(path).stem}-{hashlib.sha256(data).hexdigest()[:12]}.yaml"


def scrub_request(request):
    """A copy of ``request`` as stored: the stand-in's port fixed, only content headers kept, the body replaced by
    its SHA-256 and length.  Raises ``LeakInRequest`` when the body holds a detectable secret."""
    from pipeline.redact import scan

    request = copy.deepcopy(request)
    request.uri = _STANDIN_URI.sub("//127.0.0.1:8000/", request.uri)
    for name in list(request.headers):
        if name.lower() not in _KEPT_HEADERS:
            del request.headers[name]
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    if body and not body.startswith(b'{"sha256"'):
        findings = scan(body.decode("utf-8", errors="replace"), deep=True)
        if findings:
            kinds = ", ".join(sorted({f.type for f in findings}))
            raise LeakInRequest(f"a request body holds {len(findings)} potential secret(s) ({kinds})")
        request.body = json.dumps({"sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}).encode()
    return request


def scrub_response(response):
    """A copy of ``response`` without the ``date`` and ``server`` headers (stable re-recording)."""
    response = copy.deepcopy(response)
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in ("date", "server"):
            del headers[name]
    return response


def vcr(record_mode: str = "none"):
    """A ``vcr.VCR`` for eval cassettes (needs vcrpy: the ``llm`` extra)."""
    import vcr as vcrpy

    return vcrpy.VCR(
        record_mode=record_mode,
        match_on=("method", "path"),
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        filter_headers=["authorization", "api-key", "x-api-key"],
        decode_compressed_response=True,
    )


def replay_config(api_base: str = REPLAY_BASE):
    """The config of a replayed (or recorded) run: the stand-in's model name and address, no cache, no backoff."""
    from pipeline.config import Config

    return Config(engine="llm", model=REPLAY_MODEL, api_base=api_base, cache=False, retry_wait=0.0, timeout=30.0)


def live_config(model: str | None = None):
    """The configured model's config (``model``, e.g. ``eval --model agent:claude-code``, in its place when given)
    with the llm engine forced, or None when no model is configured."""
    from pipeline.config import load

    config = load({"engine": "llm", "model": model})
    return config if config.model else None


def availability(model: str | None = None) -> str | None:
    """None when the llm engine can run (a model is given or configured, or cassettes exist and vcrpy is
    installed)."""
    if live_config(model) is not None:
        return None
    try:
        import vcr  # noqa: F401
    except ImportError:
        from pipeline.extras import install_line

        return ("no model configured (DUCK_TAPE_MODEL) and vcrpy is not installed to replay cassettes: "
                f"{install_line()}")
    if not any(CASSETTE_DIR.glob("*.yaml")):
        return f"no model configured (DUCK_TAPE_MODEL) and no cassettes in {CASSETTE_DIR.relative_to(ROOT)}"
    return None


def run(path: str, now: datetime, model: str | None = None):
    """Recover ``path`` with the llm engine, live (``model``, else the configured one) or replayed (see the module
    docstring); an ``EngineOutput``.

    Raises RuntimeError (the harness scores the case as failed and keeps the message) when replaying and the
    transcript has no cassette, or the cassette was not played exactly, and when a live run made no model call
    (the model unreachable, or every call failed: the row would be the rules engine's under the llm name).
    """
    from evals.engines import EngineOutput
    from pipeline.recovery import recover

    config = live_config(model)
    if config is not None:
        result = recover(path, now=now, mask=True, config=config, action="eval")
        usage = result.run.usage if result.run is not None else None
        if usage is None or not (usage.requests or usage.cached):
            raise RuntimeError(f"no answer from {config.model}: {'; '.join(result.notes) or 'no call was made'}")
        return EngineOutput(result.text, result.state, result.transcript)
    cassette = cassette_for(path)
    if not cassette.is_file():
        raise RuntimeError(f"no cassette {cassette.relative_to(ROOT)}: record with python tests/record_eval_cassettes.py")
    with vcr().use_cassette(str(cassette)) as played:
        result = recover(path, now=now, mask=True, config=replay_config(), action="eval")
        complete = played.all_played
    if not complete or result.run is None or result.run.usage is None or result.run.usage.failed:
        raise RuntimeError(f"cassette {cassette.name} is out of date ({played.play_count} of {len(played.data)} "
                           "interactions played): re-record with python tests/record_eval_cassettes.py")
    return EngineOutput(result.text, result.state, result.transcript)
