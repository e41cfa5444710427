"""The real-session suite: ``../shared/corpus/probes.json`` read as an eval ``Suite`` (issue 12).

The corpus (``../shared/corpus/README.md``) holds real public transcripts and, for 11 of them, probe facts that
people wrote by reading each transcript end to end before any engine ran (``../shared/ANNOTATING.md``).  Its probe
shape differs from a suite YAML's, so this module translates it, keeping the corpus's scoring rule exactly:

==================================  ======================================================================
corpus probe                        ``evals.suite.Probe``
==================================  ======================================================================
``sections: [...]``                 ``sections`` (any of them; ``Decision Log`` -> ``decisions``,
                                    ``Position.Current`` -> ``current``, ``*`` -> ``file`` …)
``all: [terms]``                    ``terms`` (all in one entry)
``none: [terms]``                   kind ``absent`` with ``any_term`` (violated if any term occurs)
``status``                          ``status`` (Decision Log entries of that status; "(later rejected)"
                                    counts as REJECTED)
``absent_status`` + ``term``,       kind ``absent_status``: violated when an entry of that status names the
``unless``                          term before its `` - `` and none of the ``unless`` words
``keep``                            ``all`` over the whole file
matching                            case-insensitive, whitespace-normalised **substring**
==================================  ======================================================================

Where the corpus lives: ``$DUCK_TAPE_CORPUS`` (a folder holding ``probes.json``), else ``../shared/corpus`` beside
the repository.  Cases are named after the transcript file; transcripts are read in place, never copied.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from evals.suite import Case, Probe, Suite

ROOT = Path(__file__).resolve().parent.parent
#: ``duck-tape eval --suite real`` names this suite.
ALIAS = "real"
#: the second development set (issue 21 §5): ``shared/corpus2`` beside a source checkout, or ``$DUCK_TAPE_CORPUS2``
ALIAS2 = "real2"
ALIASES = (ALIAS, ALIAS2)

_SECTIONS = {
    "Approved Workflow": "workflow", "Position.Current": "current", "Position.Done": "done",
    "Position.Remaining": "remaining", "Decision Log": "decisions", "Established Facts": "facts",
    "Re-derivation": "rederivation", "*": "file",
}
_HARNESSES = ("claude-code", "copilot", "opencode", "codex", "gemini")


CORPUS_SHAPE = "a corpus probes file: a JSON object {transcript path: [probe objects]}"


def alias_path(alias: str) -> Path:
    """``probes.json`` of a named development set: ``real`` (``default_path``) or ``real2`` (``$DUCK_TAPE_CORPUS2``,
    else ``shared/corpus2`` beside a source checkout; InputError, exit 2, from an installed copy without it)."""
    if alias == ALIAS:
        return default_path()
    return _corpus_file("DUCK_TAPE_CORPUS2", "corpus2", "--suite real2 needs the second real-session corpus")


def default_path() -> Path:
    """``probes.json`` of the corpus: under ``$DUCK_TAPE_CORPUS`` when set, else ``shared/corpus`` beside a source
    checkout.  An installed copy has no checkout beside it (``ROOT`` is site-packages): InputError (exit 2) saying
    that ``--suite real`` needs ``DUCK_TAPE_CORPUS`` (issue 24, item 4: it looked under ``lib/python3.11/shared``)."""
    return _corpus_file("DUCK_TAPE_CORPUS", "corpus", "--suite real needs the real-session corpus")


def _corpus_file(variable: str, folder_name: str, needs: str) -> Path:
    """``probes.json`` under ``$variable`` when set, else under ``shared/<folder_name>`` beside a source checkout;
    InputError (exit 2) starting with ``needs`` from an installed copy without either."""
    from pipeline.errors import InputError

    folder = os.environ.get(variable)
    if folder:
        return Path(folder) / "probes.json"
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "evals").is_dir():
        return ROOT.parent / "shared" / folder_name / "probes.json"
    raise InputError(f"{needs}: set {variable} to the folder holding its probes.json (this installed duck-tape has "
                     "no source checkout beside it)")


def _name_of(p: Path) -> str:
    """The suite name of a corpus file: the alias whose file it is, else ``real:<its folder's name>``."""
    for alias in ALIASES:
        try:
            if alias_path(alias).resolve() == p.resolve():
                return alias
        except Exception:  # no such set here (an installed copy): not this one
            continue
    return f"{ALIAS}:{p.resolve().parent.name}"


def is_corpus_file(path: str | Path) -> bool:
    """Whether ``path`` names a corpus probe file (a ``.json`` file) rather than a suite YAML."""
    return str(path).lower().endswith(".json")


def _case_id(name: str) -> str:
    stem = Path(name).name
    for ext in (".jsonl", ".json"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "case"


def _harness(name: str) -> str:
    base = name.split("/", 1)[0]
    return next((h for h in _HARNESSES if base.startswith(h)), "generic")


def _probe(raw: dict, where: str) -> Probe:
    """One corpus probe as a ``Probe``.  Raises ``ValueError`` naming the probe for an unknown section or shape."""
    pid = raw.get("id") or "?"
    try:
        sections = [_SECTIONS[s] for s in raw.get("sections") or ["*"]]
    except KeyError as exc:
        raise ValueError(f"{where}: probe {pid!r}: unknown section {exc.args[0]!r} (one of {', '.join(_SECTIONS)})")
    common = {"id": pid, "sections": sections, "note": raw.get("note"), "matching": "substring"}
    kind = raw.get("kind")
    if kind == "absent_status":
        return Probe(kind="absent_status", terms=[raw["term"]], status=raw["status"], unless=raw.get("unless") or [],
                     **common)
    if "none" in raw:
        return Probe(kind="absent", terms=raw["none"], any_term=True, **common)
    if "all" not in raw:
        raise ValueError(f"{where}: probe {pid!r}: expected 'all' or 'none' terms")
    return Probe(kind=kind, terms=raw["all"], status=raw.get("status"), **common)


def _shape_problem(raw: object) -> str | None:
    """What keeps the parsed JSON ``raw`` from being a probes file, or None (issue 24, item 4: ``--suite
    package.json`` crashed with AttributeError on its string values)."""
    if not isinstance(raw, dict):
        return f"a JSON {type(raw).__name__}"
    if not raw:
        return "an empty object"
    for name, probes in raw.items():
        if not isinstance(probes, list) or not all(isinstance(p, dict) for p in probes):
            return f"{name!r} holds a {type(probes).__name__}, not a list of probe objects"
    return None


def load(path: str | Path | None = None, name: str | None = None) -> Suite:
    """The corpus probe file at ``path`` (default ``default_path()``) as a ``Suite`` named ``name`` (default: the
    alias whose file it is, ``real`` or ``real2``, else ``real`` for the first set's and ``real:<folder>`` for
    any other; thresholds are looked up by that name).

    Transcript paths are the keys of the file, relative to its folder.  Raises ``pipeline.errors.InputError``
    (exit 2) naming the file for a missing, unreadable or binary file, bad JSON, JSON of another shape or a probe
    of an unknown shape; with ``path`` None also when there is no corpus to find (``default_path``).
    """
    from pydantic import ValidationError

    from pipeline.errors import InputError

    from evals.suite import read_text

    p = Path(path) if path is not None else default_path()
    hint = "" if path is not None else " (set DUCK_TAPE_CORPUS to the folder holding the corpus's probes.json)"
    try:
        raw = json.loads(read_text(p, CORPUS_SHAPE + hint))
    except json.JSONDecodeError as exc:
        raise InputError(f"bad JSON: {exc.msg}; expected {CORPUS_SHAPE}", path=str(p), line=exc.lineno) from exc
    problem = _shape_problem(raw)
    if problem:
        raise InputError(f"{problem}: expected {CORPUS_SHAPE} (a suite is a .yaml file)", path=str(p))
    folder = p.resolve().parent
    cases = []
    try:
        for rel, probes in raw.items():
            cases.append(Case(
                id=_case_id(rel), harness=_harness(rel), transcript=str(folder / rel),
                failure_mode="real public session, probes written blind before any engine ran",
                probes=[_probe(pr, f"{p}: {rel}") for pr in probes],
            ))
        if name is None:
            name = _name_of(p)
        return Suite(name=name, version=1, cases=cases,
                     description=f"{sum(len(c.probes) for c in cases)} blind-annotated probes on {len(cases)} real "
                                 f"public transcripts ({p})")
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise InputError(f"invalid real-session probes: {exc}", path=str(p)) from exc
