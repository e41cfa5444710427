"""What of a state file (or a free-form file) belongs in CONTEXT.md, and where (DESIGN.md "Translation (rigid map)").

CONTEXT.md is committed and read by every later session, so it keeps what still holds next session and leaves out
what was one step of this one.  Each function here takes one item's text and returns a ``Verdict``: the section it
goes to, or ``None`` and the reason it is left out (the merge preview prints ``Skipped: <what> (<reason>)``).

The classification reads *structure*, in any language the lexicon knows (``pipeline.context.lexicon``):

* **decision** (``decision``): a lasting choice names what the project uses, does not use, or how it works;
  a *procedural approval* has an action of this session as its object — a session verb (commit, push, run, retry,
  continue, 提交, 커밋, コミット, rodar, ejecutar …) or an edit verb with no reason beyond "the user said yes" — and
  nothing lasting (instead of, every, by default, from now on, so that …).  Plan approvals (a task list), option
  labels, placeholders, the assistant's narration and texts about "the user" (prompt templates) are left out too;
* **fact** (``fact``): a *user rule* (never/always/must, "don't touch/commit/push X", 永远不要, 절대, 絶対,
  nunca …) goes to Conventions; a *definition* ("X means Y", "term: a definition") to Glossary; a *durable fact*
  (a cause, an environment trap — a command that failed for an environment reason and the one that worked —, a
  port, a version, a general behaviour) to Notes; a one-off failure, pasted output, a progress report or a
  request of this session is left out;
* **remaining item** (``remaining``): a question (unless it is the assistant's offer or names nothing) goes to
  Open-Questions, a procedural step is left out, other unfinished work goes to Deferred-Debt with a type;
* **goals** (``goals``): only the user's explicit "the goal is …" / "目标是 …" sentences.

Pure functions on strings; no I/O.  The verdict, the reasons and the structural readings they share live in
``pipeline.context.structure``.
"""

from __future__ import annotations

import json
import re

from pipeline.context import lexicon as lx
from pipeline.context.keys import GENERIC_LABELS, split_term
# the reasons are re-exported: callers and tests read them here
from pipeline.context.structure import (  # noqa: F401
    BACKTICK, COMMAND, DECLINED_ACTION, FOR_THE_USER, FRAGMENT, GUESS, HARNESS, INTERRUPTED, NARRATION,
    NO_SUBJECT, OBSERVATION, OFFER, ONE_OFF_FAILURE, PASTED, PLACEHOLDER, PLAN, PROCEDURAL, PROGRESS, PROMPT_TEXT,
    REQUEST, REQUIREMENT, SHELL_WORD, STEP, TASK_LIST, TEMPORARY, Verdict, clauses, command_shaped, head_action, skip, subject_words,
)
from pipeline.lazyre import lazy_re

_I = re.IGNORECASE

# --- decisions ----------------------------------------------------------------------------------------------

_PLACEHOLDER = lazy_re(r"^\s*(?:\[[^\]]*\]|<[^>]*>|\.\.\.|…|tbd|n/?a|none)\s*$", _I)
_OPTION_LABEL = lazy_re(r"^\s*(?:option\s*)?[(\[]?(?:\d{1,2}|[a-e])[)\].]?\s*$", _I)
_PLAN = lazy_re(
    r"^\s*(?:the\s+|this\s+|that\s+)?(?:plan|proposed\s+plan|implementation\s+plan)\b\s*[:：]?|"
    r"^\s*(?:o\s+|este\s+|el\s+)?(?:plano|plan)\s*[:：]|^\s*(?:计划|計画|계획)\s*[:：]",
    _I,
)
_SECOND_PERSON = lazy_re(
    r"\b(?:you|your|yours|you're|you'll)\b|\b(?:você|voce|seu|sua|seus|suas|tu|tú|usted|tus?)\b|你|당신|あなた", _I)
_ATTRIBUTION = lazy_re(
    r"^\s*(?:the\s+)?(?:user|assistant|agent)\b|^\s*(?:user's|stated\s+by|scope\s+chosen|per\s+the|approved\s+by|"
    r"picked\s+by|chosen\s+by|declined|as\s+asked|as\s+requested|in\s+favou?r\s+of)\b|^\s*[\"“'(]",
    _I,
)
_RECOMMENDED = lazy_re(r"\s*\((?:recommended|recomendad[oa]|推荐|추천|推奨)\)\s*", _I)


def _json_answer(what: str) -> str:
    """A question tool's raw JSON answer (``{"answers": {"0": "Framer Motion"}}``) as its answer texts."""
    text = what.strip()
    if not text.startswith("{"):
        return what
    try:
        data = json.loads(text)
    except ValueError:
        return what
    leaves: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            leaves.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(data)
    return "; ".join(leaf for leaf in leaves if leaf.strip()) or what


def decision(status: str, what: str, reasoning: str = "") -> Verdict:
    """Where a Decision Log entry goes: Decisions (a lasting choice, ``text`` = the cleaned *what*) or left out
    (module docstring).  ``status``: APPROVED or REJECTED."""
    text = _RECOMMENDED.sub(" ", _json_answer(what)).strip()
    declined = status == "REJECTED"
    procedural = DECLINED_ACTION if declined else PROCEDURAL
    if not text or _PLACEHOLDER.match(text):
        return skip(PLACEHOLDER, text)
    if _OPTION_LABEL.match(text):
        return skip(NO_SUBJECT, text)
    if lx.THE_USER.search(text):
        return skip(PROMPT_TEXT, text)
    if lx.NARRATION.search(text):
        return skip(NARRATION, text)
    if _PLAN.match(text):
        return skip(PLAN, text)
    if _SECOND_PERSON.search(text):
        return skip(REQUEST, text)
    if command_shaped(text):
        return skip(COMMAND if not declined else DECLINED_ACTION, text)
    lasting = lx.LASTING.search(text) is not None
    action = head_action(text)
    if action == "session" and not lasting:
        return skip(procedural, text)
    if action == "edit" and not lasting and _attribution_only(reasoning) and not _designs(text):
        return skip(procedural, text)
    if not lasting and lx.ONE_OFF.search(text):
        return skip(TEMPORARY, text)
    if not subject_words(text):
        return skip(NO_SUBJECT, text)
    return Verdict("Decisions", text=text)


_HOW = lazy_re(
    r"\b(?:with|using|via|keyed\s+by|backed\s+by|based\s+on|through|com|usando|con|mediante|por\s+meio\s+de)\b|"
    r"使用|采用|사용해|을\s*통해|를\s*통해|を使って|を用いて",
    _I,
)


def _designs(text: str) -> bool:
    """True when an edit names *how* the project will work: a non-deictic object and a mechanism ("add a retry
    with exponential backoff, keyed by an idempotency key"), not one step ("fix that error")."""
    body = lx.LEAD_IN.sub("", text.strip())
    rest = body.split(None, 1)[1] if len(body.split(None, 1)) > 1 else ""
    rest = re.sub(r"^(?:the|a|an|o|a|um|uma|el|la|un|una)\s+", "", rest, flags=_I)
    return bool(rest) and not lx.DEICTIC.match(rest) and bool(_HOW.search(text)) and len(subject_words(rest)) >= 2


def instruction(text: str) -> bool:
    """True when ``text`` is an instruction (an imperative: "Ensure coverage balance: …", "make sure …")."""
    return bool(text.strip()) and bool(_IMPERATIVE.match(text.strip()) or head_action(text) is not None)


def _attribution_only(reasoning: str) -> bool:
    """True when a decision's reasoning only says who decided ("user approved (\"yes\")", "stated by the
    assistant", a bare quote) and gives no technical why."""
    return not reasoning.strip() or bool(_ATTRIBUTION.match(reasoning))


# --- facts --------------------------------------------------------------------------------------------------

_TRIAL = lazy_re(r"^`(?P<cmd>[^`]+)`\s+(?P<verb>failed|was\s+blocked|errored|crashed|timed\s+out)\b(?P<error>.*)", _I | re.S)
ENV_ERROR = lazy_re(
    r"command\s+not\s+found|not\s+found:\s*command|no\s+module\s+named|modulenotfounderror|failed\s+to\s+spawn|"
    r"not\s+installed|is\s+not\s+recognized|permission|EACCES|\bblocked\b|\bdenied\b|not\s+authenticated|"
    r"unauthori[sz]ed|externally[- ]managed|connection\s+refused|ECONNREFUSED|\bhook\b|\bpolicy\b|sandbox|"
    r"not\s+allowed|"
    r"address\s+already\s+in\s+use|EADDRINUSE|no\s+such\s+command|unknown\s+command|ERESOLVE|peer\s+dep|"
    r"legacy-peer-deps|unsupported\s+(?:python|node|engine)|requires\s+(?:python|node)",
    _I,
)
_SESSION_ERROR = lazy_re(r"plan\s+mode|interrupted|cancel+ed\s+by|request\s+interrupted", _I)
_NOT_RUN = lazy_re(r"interrupted|cancel+ed\s+by|plan\s+mode|(?:was\s+)?denied\s+by|blocked\s+by|permission\s+for\s+this\s+action", _I)
_WORKED = lazy_re(r";\s*`(?P<cmd>[^`]+)`\s+worked\b", _I)
_SENTENCE = lazy_re(r"(?<=[.!?。！？])\s*")
_PASTED = lazy_re(
    r"^(?:pasted\s+(?:log|output|text)|output|log|traceback)\b[^:]{0,20}:|^\s*\|.*\|\s*$|^\s*traceback\b|"
    r"^\s*<[\w_-]+>|^\s*[\w.]*(?:error|exception|warning)\b\s*[:(]|^\s*(?:fatal|error|warning|warn|err!?)\s*[:\[]|"
    r"^\s*`?[0-9a-f]{7,40}`?\s+[—–-]|^\s*\"[\w.-]+\"\s*:",
    _I,
)
_ERROR_IS = lazy_re(r"^(?:the\s+)?(?:error|exception|failure|crash)\s+(?:is|was|says|reads)\s*[:`'\"“]", _I)
_HARNESS = lazy_re(r"^[\w .-]{1,30}\s+reported\b", _I)
_DURABLE_LABEL = lazy_re(
    r"^(?:root\s+cause|cause|key\s+finding|finding|quirk|gotcha|caveat|trap|note|heads\s+up|lesson(?:\s+learned)?|"
    r"causa|causa\s+raiz|原因|根因|注意|원인|주의|原因|注意)\s*[:：]",
    _I,
)
_DEFINE = lazy_re(
    r"^(?P<term>[^,;:.?!]{1,40}?)\s+(?:means|stands\s+for|is\s+short\s+for|refers\s+to|is\s+defined\s+as|"
    r"is\s+what\s+we\s+call|significa|quer\s+dizer|se\s+refere\s+a|refere-se\s+a|quiere\s+decir|é\s+a\s+sigla\s+de|"
    r"es\s+la\s+sigla\s+de)\s+(?P<definition>\S.*)$|"
    r"^(?:所谓)?(?P<zh_term>[^，,。：:]{1,20}?)(?:是指|指的是|的意思是|就是指)(?P<zh_def>.+)$|"
    r"^(?P<ko_term>[^,，。:：]{1,20}?)(?:이란|란|라는\s*것은)\s*(?P<ko_def>.+)$|"
    r"^(?P<ja_term>[^、，。:：]{1,20}?)とは[、,]?\s*(?P<ja_def>.+)$",
    _I,
)
_DEF_START = lazy_re(r"[a-z]|(?:a|an|the)\s", 0)
_STATEMENT = lazy_re(r".*?\b(?:is|are|was|were|has|have|had)\s+(?:still|not|now|already|no|been)\b", _I)
"""A definition continues as a noun phrase; "ratification date is still TODO" after a label is a statement."""
_TERM_LABELS = GENERIC_LABELS | frozenset(
    "issue issues problem problems fix fixes error errors solution setting settings step steps phase task tasks "
    "question answer bug bugs change changes test tests output command commands example usage default status "
    "current next done remaining todo action actions recommendation impact location file files line outstanding "
    "pending open blocked blocker blockers pendente pendentes pendiente pendientes bloqueado bloqueada próximo "
    "próximos siguiente siguientes problema problemas solução solución resultado nota".split()
)
_IMPERATIVE = lazy_re(
    r"^(?:(?:no|nope|n[aã]o|不|아니)[,，]?\s*)?(?:please\s+)?(?:make\s+sure|ensure|keep|avoid|use|wrap|preserve|stick|leave|assume|consider|remember|set|"
    r"put|give|let|try|include|exclude|follow|prefer|skip|ignore|don'?t|do\s+not|stop|go|get|bring|mantenha|use|"
    r"evite|garanta|certifique|aseg[uú]rate|evita|mant[eé]n|usa|no\s+\w+|n[aã]o\s+\w+)\b",
    _I,
)
_REQUIRED = lazy_re(
    r"\b(?:must|should|shall|has\s+to|have\s+to|deve|devem|debe|deben|tem\s+que|tiene\s+que)\b|"
    r"必须|应该|应当|해야|なければならない|べき",
    _I,
)
"""A requirement ("the viewport must snap …") states what the work should achieve, not what was found."""
_LABEL_PREFIX = lazy_re(r"^(?P<label>[^:：`\"]{1,40})[:：]\s+(?P<rest>\S.*)$")


def fact(text: str) -> Verdict:
    """Where an Established Facts line goes: Conventions (a user rule), Glossary (a definition), Notes (a durable
    fact) or left out (module docstring).  ``text`` of the verdict: what to write."""
    line = text.strip()
    if not line:
        return skip(OBSERVATION, line)
    trial = _TRIAL.match(line)
    if trial:
        error = trial["error"]
        worked = _WORKED.search(error)
        if worked and worked["cmd"].strip() == trial["cmd"].strip():  # the same command worked on a later try
            return skip(ONE_OFF_FAILURE, line)
        reported = error[: worked.start()] if worked else error  # the failure, not the command that worked
        if ENV_ERROR.search(reported) and not _SESSION_ERROR.search(reported):
            return Verdict("Notes", text=line)
        return skip(ONE_OFF_FAILURE, line)
    if _PASTED.search(line):
        return skip(PASTED, line)
    if _ERROR_IS.match(line) and not lx.CAUSE.search(line):
        return skip(ONE_OFF_FAILURE, line)
    if _HARNESS.match(line):
        return skip(HARNESS, line)
    if lx.RFC_KEYWORD.search(line) or (lx.THE_USER.search(line) and (_IMPERATIVE.match(line) or rule(
            lx.THE_USER.sub("them", line)))):
        return skip(PROMPT_TEXT, line)
    if any(lx.NARRATION.search(sentence.strip()) for sentence in _SENTENCE.split(line) if sentence.strip()):
        return skip(NARRATION, line)
    ruled = rule(line)
    if ruled is not None:
        return Verdict("Conventions", text=ruled)
    if lx.PROGRESS.search(line) and not lx.CAUSE.search(line):
        return skip(PROGRESS, line)
    defined = definition(line)
    if defined is not None:
        return Verdict("Glossary", text=defined[1], term=defined[0])
    if lx.HEDGE.search(BACKTICK.sub(" ", line)):
        return skip(GUESS, line)
    if lx.ANAPHORIC.search(line):
        return skip(FRAGMENT, line)
    if _DURABLE_LABEL.match(line) or lx.CAUSE.search(line):
        return Verdict("Notes", text=line)
    if _REQUIRED.search(BACKTICK.sub(" ", line)):
        return skip(REQUIREMENT, line)
    if _IMPERATIVE.match(line) or head_action(line):
        return skip(REQUEST, line)
    if line.rstrip().endswith((":", "：")):
        return skip(OBSERVATION, line)
    prose = BACKTICK.sub(" ", line)
    if lx.ENVIRONMENT.search(prose) or lx.GENERAL.search(prose):
        return Verdict("Notes", text=line)
    return skip(OBSERVATION, line)


def rule(text: str, *, standing: bool = False) -> str | None:
    """The rule ``text`` states, from its first rule clause to the end (``"commit here, but never push to main"``
    -> ``"never push to main"``), or None when no clause is a rule (module docstring).  A clause tied to this
    session ("in this conversation") or written about "the user" is no rule.  ``standing``: the text comes from a
    file that is itself standing instructions (CLAUDE.md, AGENTS.md), where a plain imperative is a rule too."""
    if lx.THE_USER.search(text) or lx.RFC_KEYWORD.search(text) or text.rstrip().endswith((":", "：")):
        return None
    for offset, clause in clauses(text):
        if lx.THIS_SESSION.search(clause) or lx.QUESTION.search(clause):
            continue
        if lx.ONE_OFF.search(clause) and not lx.RULE_START.search(clause):  # "don't push yet"; "always … first" is one
            continue
        cjk = lx.CJK.search(clause) is not None
        prohibited = lx.PROHIBITION.search(clause)
        if prohibited and (cjk or prohibited.start() == 0):
            groups = (prohibited.group("object"), prohibited.group("pt"), prohibited.group("es"))
            obj = clause if cjk else next((g for g in groups if g is not None), "")
            if subject_words(obj):
                return text[offset:].strip()
        started = lx.RULE_START.search(clause)
        if started and (cjk or started.start() == 0):
            return text[offset:].strip()
        if (standing and offset == 0 and (_IMPERATIVE.match(clause) or head_action(clause)) and subject_words(clause)
                and decision("APPROVED", clause).reason not in (PROCEDURAL, COMMAND, TEMPORARY, REQUEST)):
            return text.strip()
    return None


def definition(text: str) -> tuple[str, str] | None:
    """``(term, definition)`` when ``text`` defines a term: "X means / stands for / refers to Y" (and the same
    verbs in the other languages), or ``term: definition`` with a short noun-phrase term that is no generic label
    and no command and a definition that continues as a noun phrase (lowercase start: "seconds until …")."""
    match = _DEFINE.match(text.strip())
    if match:
        for term_group, def_group in (("term", "definition"), ("zh_term", "zh_def"), ("ko_term", "ko_def"),
                                      ("ja_term", "ja_def")):
            if match.group(term_group):
                term, meaning = match.group(term_group).strip(), match.group(def_group).strip()
                if _term_ok(term):
                    return term, meaning
        return None
    term, meaning = split_term(text)
    if term is None or meaning == text or not _term_ok(term):
        return None
    if (not _DEF_START.match(meaning) or _TRIAL.match(meaning) or lx.NARRATION.search(meaning)
            or _STATEMENT.match(meaning)):
        return None
    return term, meaning


def _term_ok(term: str) -> bool:
    bare = term.strip("*_` ").casefold()
    if not bare or bare in _TERM_LABELS or "`" in term or SHELL_WORD.match(bare) or re.search(r"\s--?\w", bare):
        return False
    if not subject_words(term):  # "This: …", "它：…" point at the message around them
        return False
    return (len(term.split()) <= 4 and not lx.NARRATION.match(term) and not head_action(term)
            and not _IMPERATIVE.match(term))


# --- remaining items ----------------------------------------------------------------------------------------

_DEBT_TYPES: tuple[tuple[str, object], ...] = (
    ("security", lazy_re(r"\b(?:security|secrets?|credentials?|vulnerab\w*|cves?|segurança|seguridad)\b|安全|보안|セキュリティ", _I)),
    ("test", lazy_re(r"\b(?:tests?|testing|coverage|pytest|jest|vitest|spec|teste|testes|prueba|pruebas)\b|测试|테스트|テスト", _I)),
    ("perf", lazy_re(r"\b(?:perf|performance|slow|latency|memory|desempenho|rendimiento)\b|性能|성능|パフォーマンス", _I)),
    ("docs", lazy_re(r"\b(?:docs?|document\w*|readme|documenta\w*)\b|文档|문서|ドキュメント", _I)),
    ("fix", lazy_re(r"\b(?:fix|bug|broken|fail\w*|error|crash\w*|corrigir|erro|arreglar|falla)\b|修复|错误|버그|오류|バグ|エラー", _I)),
)


def debt_type(text: str) -> str:
    """The Deferred-Debt type of a work item: security, test, perf, docs, fix (by its words in any of the
    languages, commands in backticks aside: "Get `make docs` succeeding" is a fix), else ``todo``."""
    prose = BACKTICK.sub(" ", text)
    for name, pattern in _DEBT_TYPES:
        if pattern.search(prose):
            return name
    return "todo"


def remaining(text: str) -> Verdict:
    """Where a Position.Remaining item goes: Open-Questions (a question the user was asked), Deferred-Debt
    (unfinished work, with its ``type``) or left out (an offer, a question naming nothing, a procedural step)."""
    line = text.strip()
    if lx.QUESTION.search(line):
        labelled = _LABEL_PREFIX.match(line)
        question = labelled["rest"] if labelled and not lx.QUESTION.search(labelled["label"]) else line
        if lx.OFFER.search(question):
            return skip(OFFER, line)
        if not subject_words(question):
            return skip(NO_SUBJECT, line)
        return Verdict("Open-Questions", text=question)
    if head_action(line) == "session" and not lx.LASTING.search(line):
        return skip(STEP, line)
    if _NOT_RUN.search(line):
        return skip(INTERRUPTED, line)
    if _SECOND_PERSON.search(BACKTICK.sub(" ", line)):
        return skip(FOR_THE_USER, line)
    if lx.NARRATION.search(line):
        return skip(NARRATION, line)
    return Verdict("Deferred-Debt", text=line, type=debt_type(line))


# --- goals --------------------------------------------------------------------------------------------------


def goals(text: str) -> list[str]:
    """The goals the user states explicitly in ``text`` ("the goal is X", "our priority: X", "目标是 X", "목표는 X",
    "目標は X", "o objetivo é X", "el objetivo es X"), each as the sentence that states it, in order."""
    found: list[str] = []
    for match in lx.GOAL.finditer(text or ""):
        value = next((g for g in match.groups() if g), "")
        infinitive = re.sub(r"^(?:to|para|que)\s+", "", value.strip(), flags=_I)
        if subject_words(value) and (lx.CJK.search(value) or head_action(infinitive) != "session"):
            sentence = match.group(0).strip().lstrip(".!?;").strip()
            if sentence not in found:
                found.append(sentence)
    return found
