"""Established Facts: what was found out during the session, one verbatim sentence per fact (DESIGN.md "Agent
State file": "one fact per line, verbatim"; "Stages": constraints the user stated, sub-agent results).

Kinds and sources:
* ``constraint`` — a user prompt sentence with never / always / must / must not / don't / do not / only /
  avoid / at most…, or one that starts with "make sure / ensure / keep / stick to / preserve / leave", quoted as
  the user wrote it;
* ``subagent`` — the key finding sentences (at most ``SUBAGENT_PICK`` each) of a ``subagent_result``, scored
  by finding cues (found, root cause, defined in, missing, requires…) and concrete detail (paths, code, numbers);
* ``root_cause`` — assistant sentences "the root cause is…", "the issue is that…", "turns out…", "caused
  by…", and "the problem was… / …failed because X was…" when they name a failure;
* ``quirk`` — environment facts found by trial and error ("X only works with Y", "needs --flag", "port is
  6380 not 6379", "must be run from…"), and the sentence of the assistant's message right after a failed tool
  call that explains what is needed;
* ``fact`` — "confirmed that…", "found that…", "Note: …", and measured findings: two quantities related by a
  comparison ("scans all 40M rows to find ~4k", "12 ms instead of 232 s", "38 MB versus 410 MB").
* ``trial`` (written as ``quirk``) — what the tool calls established (``trials``: a changed retry that worked,
  a blocked call, a missing capability, one repeated error), the environment traps the shell calls show
  (``shellenv``: a ``cd`` that did not carry over, a repository created outside the intended folder, a branch
  that differs from the one a push names), an edit that dropped imported names the file still uses
  (``edits.dropped_imports``) and the failing lines of a log the user pasted
  (``findings.pasted_failure``);
* code-review findings (``reviews``) are ``subagent`` facts; sentences of the ``findings`` families (gap,
  placement, measured change, dead end, cause, environment; several languages) are facts of the matching kind,
  a measured change only when its figures come from this turn's tool output; a user's hindsight lesson
  (``findings.LESSON``) is a constraint.  A sub-agent's file listings, "created X" lines, usage notes and
  descriptions of code ("Uses a list comprehension: …", "`lint`: Lint the code", "`[[1], [2]]` → `[1, 2]`") are
  not findings.  Neither are an assistant sentence that leads into a list (ends with a colon) nor the agent's
  own inability ("Therefore, I cannot push the changes.", "não consigo…", "我无法…"): its cause is the fact.
Compaction summaries only fill space left over, and only with facts no other event states.  A main-thread
message repeated verbatim is read once.  Never from tool output, reasoning or sub-agent chatter.

Bounds: at most ``MAX_FACTS``; kinds ordered constraints, sub-agent, root causes, quirks, others, each kind
chronological.  When a kind has more than its quota, its earliest half and latest half are kept; free slots are
then filled in kind order.  Of each kind only the first and the last ``CANDIDATE_WINDOW`` candidates are kept
for that choice (``_Window``), so the work and the memory stay bounded on a session of any length.  Duplicates (same normalized text, or content words overlapping >= 70 %, or the
smaller set covered >= 85 %) are dropped, the first occurrence kept.  Then (``factprune``): a user sentence
that only restates a decision the user made in it (the Decision Log passed to ``build``) is not a constraint,
and of several sub-agent / root-cause / quirk / other facts about the same finding (same distinctive tokens:
numbers, paths, identifiers) only the most informative is kept, preferring the one that states the resolution.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.lazyre import lazy_re
from pipeline.litgate import gated_re
from pipeline.stages.rules import candidates, edits, factprune, findings, paste, reviews, shellenv, struggle, tools, trials
from pipeline.stages.rules.candidates import Candidate
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import (
    SimilarIndex, clip, local_spans, norm_key, quote, span_index_at, strip_markup, tokens,
)
from pipeline.state.model import Decision, Evidence, Fact

MAX_FACTS = 25
FACT_LIMIT = 300  # characters
SUBAGENT_PICK = 3
SUB_MIN_SCORE = 3  # a finding cue, a concrete detail and a digit, or an observed state
SHORT_RESULT = 400  # characters: a result this short keeps its lead sentence whatever its cues
KIND_ORDER = ("constraint", "subagent", "trial", "root_cause", "quirk", "fact")
QUOTA = {"constraint": 8, "subagent": 6, "trial": 6, "root_cause": 5, "quirk": 5, "fact": 3}
CANDIDATE_WINDOW = 64  # candidates kept of each kind at each end of the session (> 4x the largest quota)
#: internal kinds written as another ``Fact.kind`` (a trial-and-error fact is an environment quirk)
_OUT_KIND = {"trial": "quirk"}

_CONSTRAINT = gated_re(
    r"\b(?:never|always|must|mustn't|don't|dont|do\s+not|only|avoid|under\s+no\s+circumstances|"
    r"not\s+allowed|forbidden|no\s+more\s+than|at\s+most|at\s+least|keep\s+(?:it|them|the\s+\w+)\s+(?:under|below|within)|"
    r"(?:we|you)\s+(?:can't|cannot|can\s+not)|without\s+(?:\w+ing|breaking|changing|touching))\b"
    r"|^(?:(?:please|and|also|but|just)\s+)*(?:make\s+sure|ensure|keep|stick\s+to|stay\s+(?:in|on|within|away)|preserve|"
    r"leave)\b",
    re.I,
)
_NOT_CONSTRAINT = gated_re(
    r"\b(?:(?:I|we)\s+(?:don't|do\s+not)\s+(?:know|think|understand|see|get|have|remember|care|mind|need\s+to\s+know)|"
    r"if\s+only|not\s+only|only\s+(?:if\s+you|just)|why\s+(?:don't|do)|don't\s+(?:know|think))\b",
    re.I,
)
_ROOT = lazy_re(
    r"\broot\s+cause(?:\s*:|\s+(?:is|was|here)\b|\s+of\b.{0,80}?\b(?:is|was)\b)|\bthe\s+(?:real\s+|actual\s+|underlying\s+)?(?:problem|issue|bug|culprit|cause)\s+(?:is|was|here\s+is|turned\s+out)\b|"
    r"\bturns?\s+out\b|\bturned\s+out\b|\bcaused\s+by\b|\bthe\s+reason\s+(?:is|was)\b|\bthat'?s\s+why\b|\bwhich\s+(?:is|was)\s+why\b|"
    r"\b(?:which|that)(?:'s|\s+is|\s+was)\s+where\s+(?:the\s+|this\s+|that\s+|our\s+)?\S+(?:\s+\S+)?\s+(?:comes?|came)\s+from\b|"
    r"\b(?:which|that|this)\s+explains\s+(?:the|why|our)\b|"
    r"\bbecause\s+(?:the\s+)?\S+(?:\s+\S+){0,5}\s+(?:was|were|wasn't|weren't|is\s+not|isn't|had|hadn't|did\s+not|didn't|"
    r"never|doesn't|does\s+not)\b",
    re.I,
)
_FAILURE_WORD = lazy_re(
    r"\b(?:fail\w*|error\w*|broke\w*|broken|crash\w*|bug\w*|wrong|missing|timeout|timed\s+out|flak\w+|exception|refused|"
    r"hang\w*|leak\w*|race|deadlock\w*|50\d|40\d|undefined|null|none)\b",
    re.I,
)
_ROOT_NEEDS_FAILURE = lazy_re(
    r"^(?!.*\b(?:root\s+cause|culprit|turns?\s+out|turned\s+out|caused\s+by|(?:problem|issue|bug)\s+(?:is|was)\s+that|"
    r"(?:comes?|came)\s+from|explains)\b)", re.I
)
_QUIRK = lazy_re(
    r"\bonly\s+works\s+(?:with|when|if|from|on|in|under)\b|\bworks\s+only\b|"
    r"\bonly\s+(?:runs|starts|builds|passes|succeeds|loads|compiles|connects|resolves|installs|finds)\b[^.;]{0,80}?"
    r"\b(?:when|with|if|from|under|after|once)\b|\b(?:needs?|requires?|required)\s+(?:the\s+)?`?--?[\w-]+|"
    r"\bmust\s+be\s+(?:run|started|called|executed|invoked|set)\b|\b(?:has|have|needs?)\s+to\s+be\s+(?:run|started|set|executed)\b|"
    r"\bport\s+(?:is|was)\s+`?\d+|\bis\s+`?[\w.:/-]+`?,?\s+not\s+`?[\w.:/-]+|\binstead\s+of\s+the\s+default\b|\bnot\s+the\s+default\b|"
    r"\b(?:doesn't|does\s+not|don't|do\s+not)\s+support\b|\b(?:isn't|is\s+not|not)\s+installed\b|"
    r"\brequires?\s+(?:python|node|java|go|ruby|version|an?\s+env\w*|the\s+env\w*|env\w*|root|sudo|docker)\b|"
    r"\bonly\s+(?:available|supported|exists?)\b|\b(?:env(?:ironment)?\s+var(?:iable)?s?)\b.*\b(?:must|needs?|has\s+to|required)\b|"
    r"\bexpects?\s+(?:a|an|the)?\s*\S+\s+(?:not|instead)\b|\bdefaults?\s+to\b|\b\S*\d\S*,?\s+not\s+\S*\d",
    re.I,
)
_FIX_CUE = gated_re(
    r"\b(?:needs?\s+(?:to\s+be|the|a|an|--|`)|must\s+be|requires?|required|should\s+be|has\s+to\s+be|the\s+fix\s+is|"
    r"missing|not\s+installed|not\s+found|wasn't|isn't|doesn't\s+(?:exist|support|accept|work|have)|can't|cannot|expects?|"
    r"only\s+(?:works|accepts|supports|exists)|because|since|the\s+(?:error|issue|problem)\s+(?:is|was))\b",
    re.I,
)
_SELF_TALK = lazy_re(
    r"^(?:(?:ok(?:ay)?|great|good|now|so|alright|perfect|hmm)[,!.]?\s+)?(?:let\s+me|let's|I'll|I\s+will|I\s+need\s+to|I'm\s+going|"
    r"I\s+am\s+going|now\b|next\b|first\b|then\b|I\s+should|we\s+need\s+to|time\s+to|let\s+us)",
    re.I,
)
#: the agent saying what it cannot do ("Therefore, I cannot stage, commit, or push the changes.", "Não consigo
#: acessar o repositório.", "No puedo continuar.", "我无法推送这些更改。"): a consequence of a failure whose cause
#: is the fact (``trials`` states it), not a fact of its own
_SELF_UNABLE = lazy_re(
    r"^(?:(?:therefore|so|thus|hence|for\s+now|at\s+this\s+point|unfortunately|however|sadly|as\s+a\s+result|still|"
    r"because\s+of\s+this|given\s+this|this\s+means|portanto|ent[aã]o|por\s+isso|infelizmente|por\s+ahora|por\s+eso|"
    r"lamentablemente|sin\s+embargo|所以|因此|目前)\s*[,，]?\s*)*"
    r"(?:(?:I|we)\s*(?:cannot|can't|can\s+not|couldn't|could\s+not|am\s+unable|'m\s+unable|are\s+unable|'re\s+unable|"
    r"was\s+unable|were\s+unable|am\s+not\s+able|'m\s+not\s+able|won't\s+be\s+able|still\s+cannot|still\s+can't)\b|"
    r"(?:eu\s+|n[oó]s\s+|yo\s+)?n[aã]?o\s+(?:consigo|conseguimos|consegui|posso|podemos|puedo|pude|podemos)\b|"
    r"(?:我|我们)(?:暂时|目前|现在|仍然|还是)?(?:无法|不能|没法|没办法))",
    re.I,
)
_OTHER = lazy_re(
    r"\b(?:confirmed|verified)\s+that\b|\b(?:found|noticed|discovered|realized|learned)\s+that\b|^(?:note|important|fyi|heads\s+up)\s*:",
    re.I,
)
#: a measured finding: two quantities related by a comparison ("scans all 40M orders to find ~4k pending ones",
#: "runs in 12 ms instead of 232 s", "38 MB peak versus 410 MB")
_QTY = r"~?\b\d[\d,.]*(?:\s?[A-Za-z%][\w/%]*)"  # a number with its unit or noun: "40M", "~4k", "232 s", "300 matches"
_MEASURE = lazy_re(
    _QTY + r"[^.;]{0,80}?\b(?:to\s+find|instead\s+of|versus|vs\.?|compared\s+(?:to|with)|out\s+of|down\s+from|up\s+from|"
    r"(?:from|to)\s+" + _QTY + r")[^.;]{0,40}?" + _QTY
)
_HYPO = lazy_re(r"^(?:if|whether|maybe|perhaps|possibly|unless)\b|\b(?:might|could)\s+be\b", re.I)
_SUB_CUE = gated_re(
    r"\b(?:found|root\s+cause|caused\s+by|the\s+(?:issue|problem|bug)|responsible|defined\s+in|declared\s+in|located|lives\s+in|"
    r"is\s+(?:set|configured|implemented|handled)|handles?|reads?|writes?|calls?|uses?|depends?\s+on|missing|not\s+found|"
    r"no\s+\w+\s+(?:found|exists?)|only|must|requires?|because|returns?|throws?|raises?|expects?|hard-?coded|default|port|"
    r"version|deprecated|broken|fails?|there\s+(?:is|are)\s+(?:no|\d+))\b",
    re.I,
)
_SUB_DETAIL = lazy_re(r"`[^`]+`|\b[\w.-]+/[\w./-]+|\b\w+\.(?:py|ts|js|tsx|go|rs|rb|java|json|toml|ya?ml|md|sh|sql|cfg|ini)\b|:\d+\b")
_SUB_HEAD = lazy_re(
    r"^(?:key\s+findings?|findings?|conclusion|summary|tl;?dr|answer|result|bottom\s+line|root\s+cause|in\s+short)\s*:", re.I
)
_DIGIT = lazy_re(r"\d")
#: a sub-agent line that reports what it made or lists, or tells how to use it, rather than what it found:
#: a file listing ("main.py (117 lines): Entry point", "create_model.py: UNet architecture", "Files: a, b"),
#: "Created / Added / Wrote X", usage instructions ("To run it…", "Usage:", "Run `x` to…")
_SUB_NOT_FINDING = lazy_re(
    r"^(?:[-*•]\s*)?(?:`?[\w./-]+\.\w{1,5}`?(?:\s*(?:&|and|,)\s*`?[\w./-]+\.\w{1,5}`?)*\s*\(\d[\d,-]*\s+lines?\)|"
    r"files?\s*:|examples?\s*:|e\.g\.|(?:\w+\s*:\s*)?`[^`\n]+`\s*(?:→|->|=>|==?)\s*`?[^`\n]+`?\s*$|`?[\w./-]+\.\w{1,5}`?\s*:\s+[A-Z]|`[^`\n]{1,40}`\s*:\s+[A-Z]|(?:created|added|wrote|generated|implemented|made|built)\s+(?:a\s+|an\s+|the\s+)?"
    r"(?:new\s+)?`?[\w./-]+|(?:[\w ]{1,25}:\s*)?(?:raises|returns|tests?\s+that|handles|accepts|takes|checks\s+that)\b|"
    r"[\w ]{1,30}:\s*`?[\w./~-]+`?$|(?:uses|tests?|contains|implements|provides|supports|defines|includes|calculates|computes|"
    r"reverses|flattens|inverts|converts|parses|iterates|validates)\b[^:\n]{0,60}:\s|(?:load|read|open|save|write|run|call|compute|apply)\s+(?:the\s+)?[\w-]+\s+[\w-]+\s+from\b|to\s+(?:use|run|start|try)\s+(?:it|this|the)|usage\s*:|run\s+`[^`]+`\s+to\b|you\s+can\s+(?:now\s+)?(?:run|use|call))",
    re.I,
)
#: a sub-agent's line of what it did ("Replaced hardcoded limits with …", "- Modified error handling …") or a
#: clean check ("No broken internal links found"): its work done, not a finding; a commit listed by hash
_SUB_DID = lazy_re(
    r"^(?:[-*•]\s*)?(?:\*\*)?(?!(?:deprecated|required|expected|needed|blocked|failed|limited|locked|used|based|caused|"
    r"missed|mixed|fixed-)\b)(?:[A-Z][a-z]+ed|Rewrote|Wrote|Made|Built|Split|Ran|Set\s+up|Put|Cut|Kept|Brought)\b"
)
_SUB_CLEAN = lazy_re(r"^no\s+(?:[\w-]+\s+){0,3}(?:found|detected)\W*$|^`?[0-9a-f]{7,40}`?\s*[—–:-]\s", re.I)
_SUB_LIMIT = lazy_re(r"\b(?:not|no|never|only|because|but|however|instead|still|except|unless)\b|n't\b", re.I)
#: a state the sub-agent observed ("main is 7 commits ahead of origin", "working tree is clean", "3 tests fail")
_SUB_STATE = lazy_re(
    r"\b(?:ahead|behind|clean|dirty|uncommitted|unpushed|untracked|passes|passing|fails?|failing|broken|missing|"
    r"not\s+(?:found|present|set|used|caught|handled)|none\s+(?:found|present)|no\s+\w+\s+(?:were|was|is|are)\s+(?:found|present))\b",
    re.I,
)
_SUB_SKIP = lazy_re(
    r"^(?:I'll|I\s+will|let\s+me|I\s+have|I've|here\s+is|here's|now\b|based\s+on|in\s+summary|overall|agentId|"
    r"done\b|task\s+completed|<\/?task_result>|the\s+following|below\s+is)",
    re.I,
)
#: Literal cues of the root-cause / quirk / other rules, lower case, grouped by first letter for speed: only the
#: sentences holding one are checked against those rules.
_CUE = gated_re(
    r"\b(?:b(?:ecause|ug)|c(?:aus|onfirmed|ulprit|omes?\s+from|ame\s+from)|d(?:efault|own\s+from|iscovered|oesn't\s+support|o\s+not\s+support)|"
    r"e(?:xpect|xplains|nv(?:ironment)?\s+var)|f(?:yi|ound\s+that)|h(?:eads\s+up|as\s+to\s+be|ave\s+to\s+be)|"
    r"i(?:ssue|nstalled|nstead\s+of|mportant)|l(?:earned)|m(?:ust\s+be)|n(?:eed|ot\s+the\s+default|ote\s*:|oticed|ot\s+installed)|"
    r"o(?:nly|ut\s+of)|p(?:roblem|ort\s)|r(?:oot\s+cause|eason|equir|ealized)|s(?:upport)|t(?:urn(?:s|ed)?\s+out|o\s+find)|"
    r"v(?:erified|ersus|s\.?\s)|w(?:hy|orks\s+only))"
)
_CUE_ANYCASE = gated_re(_CUE.pattern, re.IGNORECASE)


@dataclass(slots=True)
class _Cand:
    kind: str
    text: str
    ev: int
    start: int
    end: int
    key: str
    toks: frozenset[str]


def _sentences(s: Scan, i: int):
    """``(start, end, clean sentence)`` for each sentence of event ``i``'s text."""
    text = s.events[i].text
    for a, b in s.spans(i):
        yield a, b, strip_markup(text[a:b].replace("’", "'"))


def _cand(kind: str, s: Scan, i: int, a: int, b: int, sentence: str) -> _Cand:
    text = clip(sentence, FACT_LIMIT)
    return _Cand(kind, text, i, a, b, _key(text), _toks(text))


_CJK_RUN = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def _toks(text: str) -> frozenset[str]:
    """``tokens`` plus the character pairs of CJK runs: two Korean or Chinese sentences about different things
    share their few ASCII words and must not read as duplicates."""
    pairs = {run[k:k + 2] for run in _CJK_RUN.findall(text) for k in range(len(run) - 1)}
    return tokens(text) | pairs if pairs else tokens(text)


def _key(text: str) -> str:
    """``norm_key``, or for a text with no ASCII word (Chinese, Japanese, Korean) its whitespace-normalized
    lower case, so it is not taken for empty."""
    return norm_key(text) or " ".join(text.lower().split())


#: a rule or a prohibition in the other languages the rules read: negated verbs and "always / must / never"
_CONSTRAINT_INTL = lazy_re(
    r"不要|别再|不能|不许|不准|禁止|请勿|务必|必须|一定要|"
    r"하지\s*마|말자|마세요|않도록|금지|반드시|절대|"
    r"しないで|ないでください|ないこと|禁止|必ず|絶対|使わない|"
    r"\b(?:não|nao)\s+(?:use|usar|mude|mudar|altere|alterar|faça|fazer|toque|mexa|apague|remova|quero)\b|"
    r"\b(?:nunca|sempre|jamais|jamás|siempre)\b|"
    r"\bno\s+(?:uses|usar|cambies|cambiar|toques|borres|modifiques|quiero|hagas|crees|inventes)\b|\bsin\s+usar\b|\bsem\s+usar\b|"
    r"\b(?:asegúrate|asegurate|que\s+te\s+asegures|certifique-se|garanta|assure-toi|stell\s+sicher)\b|确保|务必|"
    r"(?:사용|이용|변경|수정|삭제|추가)하지\s*않|確実に|"
    r"\b(?:niet|nooit|geen|altijd)\b|\b(?:nicht|niemals|immer|kein\w*)\b|\b(?:ne\s+\w+\s+pas|jamais|toujours)\b",
    re.I,
)


#: "only" inside a relative clause ("text that only becomes an input when clicked"): a description, no rule
_RELATIVE_ONLY = lazy_re(r"\b(?:that|which|who|it)\s+only\b", re.I)
SPEC_CHARS = 600  # a prompt this long that states requirements is a specification (its "must"s say what to build)
#: a negation inside a purpose or result clause: not a rule of the user's
_PURPOSE_NEGATION = lazy_re(
    r"\bso\s+(?:that\s+)?(?:it|they|the\s+\w+)\s+(?:\w+\s+){0,2}?(?:never|doesn't|don't|won't|isn't|aren't)\b|\bto\s+never\b", re.I
)
#: a positive requirement: "X must/should …" with no negation and no "always/only/never"
_REQUIREMENT = lazy_re(
    r"^(?!.*\b(?:not|never|don't|dont|no|avoid|always|only|without)\b)(?:the\s+)?[\w`'\"()/ .-]{1,60}?\s+(?:must|should|needs?\s+to)\b",
    re.I,
)


def _constraints(s: Scan, i: int) -> list[_Cand]:
    """Rules the user stated in prompt ``i``, in the user's own words only: a template the harness expanded, a
    pasted document or log, quoted or fetched text (``workflow.prompt_task_text``) states no rule of theirs."""
    from pipeline.stages.rules.workflow import prompt_task_text

    own = " ".join(prompt_task_text(s, i).split())
    if not own:
        return []
    text = s.events[i].text
    out = []
    for a, b, sent in _sentences(s, i):
        if len(sent) < 8 or sent.endswith(("?", "？")) or _NOT_CONSTRAINT.search(sent):
            continue
        if not _CONSTRAINT.search(sent) and not findings.LESSON.search(sent) and not _CONSTRAINT_INTL.search(sent):
            continue
        if " ".join(text[a:b].split()) not in own:
            continue  # not the user's own words
        if _PURPOSE_NEGATION.search(sent) or (len(own) > SPEC_CHARS and _REQUIREMENT.match(sent)) or (
                _RELATIVE_ONLY.search(sent) and not _CONSTRAINT.search(_RELATIVE_ONLY.sub(" ", sent))):
            continue  # "so it never gets squished" (a purpose), "tiles must be…" in a long spec (what to build)
        out.append(_cand("constraint", s, i, a, b, sent))
    return out


#: an inventory: a sub-agent's overview of code as it is (headings, a file tree, "- Name: value" bullets); its
#: sentences describe the code ("Must contain one @", "Python requirement: >=3.11"), only a problem in it is a finding
_MD_HEADING = lazy_re(r"^#{1,6}\s+\S", re.M)
_LABEL_BULLET = lazy_re(r"^[ \t]*[-*+]\s+(?:\*\*)?[A-Z][\w ./()@-]{0,40}(?:\*\*)?:\s+\S", re.M)
_TREE = ("├──", "└──")
_SUB_PROBLEM = lazy_re(
    r"\b(?:found\s+that|root\s+cause|caused\s+by|the\s+(?:issue|problem|bug)|missing|not\s+found|broken|fails?|failing|"
    r"deprecated|hard-?coded|bug|wrong|incorrect|inconsistent|mismatch|never\s+\w+ed|unused|dead\s+code|todo|fixme)\b",
    re.I,
)


def _inventory(text: str) -> bool:
    """Whether a sub-agent result is an overview of code (module rules above ``_subagent``): three headings and a
    file tree or six "- Name: value" bullets."""
    if len(text) < 200 or len(_MD_HEADING.findall(text)) < 3:
        return False
    return any(t in text for t in _TREE) or len(_LABEL_BULLET.findall(text)) >= 6


def _subagent(s: Scan, i: int) -> list[_Cand]:
    text = s.events[i].text
    if trials.harness_refusal(text):
        return []  # "Claude AI usage limit reached|…": the harness answered for the sub-agent, which found nothing
    inventory = _inventory(text)
    scored = []
    for a, b, sent in _sentences(s, i):
        if len(sent) < 25 or len(sent) > 400 or _SUB_SKIP.match(sent) or sent.endswith(("?", ":")):
            continue
        line_start = text.rfind("\n", 0, a) + 1
        if "#" in text[line_start:a] or _SUB_NOT_FINDING.match(sent):
            continue
        if struggle.claimed(sent):
            continue  # "The implementation is complete, tested, and ready": a verdict on its own work
        if _SUB_CLEAN.match(sent) or (_SUB_DID.match(sent) and not _SUB_LIMIT.search(sent)):
            continue  # the sub-agent's own work (unless it says what limits it) or a clean check: Done, not a finding
        if inventory and not (_SUB_HEAD.match(sent) or _SUB_PROBLEM.search(sent)):
            continue  # a line of an overview describes the code; only a problem in it is a finding
        score = (
            5 * bool(_SUB_HEAD.match(sent))
            + 2 * bool(_SUB_STATE.search(sent))
            + 3 * bool(_SUB_CUE.search(sent))
            + 2 * bool(_SUB_DETAIL.search(sent))
            + bool(_DIGIT.search(sent))
        )
        if score >= SUB_MIN_SCORE:
            scored.append((score, a, b, sent))
        elif not scored and len(text) <= SHORT_RESULT and score >= 0 and len(sent) >= 25:
            scored.append((SUB_MIN_SCORE, a, b, sent))  # a short result keeps its lead finding
    best = sorted(scored, key=lambda t: (-t[0], t[1]))[:SUBAGENT_PICK]
    return [_cand("subagent", s, i, a, b, sent) for _, a, b, sent in sorted(best, key=lambda t: t[1])]


#: a measured figure under a label: "Overall completion rate: 90.0% (up from 71.4%)", "p95 latency: 120 ms"
_LABELLED_FIGURE = lazy_re(r"^\W*(?P<label>[^\W\d][^:\n]{2,50}?)[*_]*\s*:[*_\s]*(?P<value>[-+]?\d[\d.,]*)")


def _superseded(s: Scan, c: _Cand) -> bool:
    """Whether ``c`` states a figure under a label (``_LABELLED_FIGURE``) that a later message or tool output of
    the session gives again with another value: the later measurement stands, the earlier one is history."""
    m = _LABELLED_FIGURE.match(c.text)
    if not m:
        return False
    label, value = m.group("label").strip(" *_").lower(), m.group("value")
    later = re.compile(re.escape(label) + r"[*_]*\s*:[*_\s]*([-+]?\d[\d.,]*)", re.I)
    for ev in s.events[c.ev + 1:]:
        if ev.kind in ("assistant_text", "tool_result", "compaction", "subagent_result") and label in ev.text.lower():
            found = later.search(ev.text)
            if found and found.group(1) != value:
                return True
    return False


#: who reported an error that no tool call asked for (``tool_result`` events without a call: the harness's own)
_HARNESS_NAMES = {"copilot-cli": "Copilot CLI"}


def _harness_errors(s: Scan) -> list[_Cand]:
    """Errors the harness itself reported (a failed result with no call id that no call asked for: MCP servers
    that do not start, a model list it cannot load), each once with how often it came, at its first occurrence."""
    seen: dict[str, list[int]] = {}
    for i in s.results:
        ev = s.events[i]
        if ev.is_error and not ev.call_id and i not in s.call_of and ev.text.strip():
            seen.setdefault(" ".join(ev.text.split()), []).append(i)
    out = []
    for text, where in seen.items():
        first = s.events[where[0]]
        who = _HARNESS_NAMES.get(first.tool_name or "", first.tool_name or "the harness")
        times = f" ({len(where)} times)" if len(where) > 1 else ""
        fact = clip(f"{who} reported{times}: {text}", FACT_LIMIT)
        out.append(_Cand("quirk", fact, where[0], 0, len(first.text), _key(fact), _toks(fact)))
    return out


def _review(s: Scan, i: int) -> list[_Cand]:
    """The findings of a code-review answer in event ``i`` (``reviews.findings``), as sub-agent facts."""
    text = s.events[i].text
    return [_Cand("subagent", clip(f, FACT_LIMIT), i, a, b, _key(f), _toks(f)) for f, a, b in reviews.findings(text)]


def _assistant(s: Scan, i: int, after_error: bool) -> list[_Cand]:
    text = s.events[i].text
    low = text.lower()
    if after_error:
        spans = s.spans(i)
        picked = set(range(len(spans)))
    else:
        matches = _CUE.finditer(low) if len(low) == len(text) else _CUE_ANYCASE.finditer(text)
        positions = sorted({m.start() for m in matches} | {m.start() for m in findings.CUE.finditer(text)})
        if not positions:
            return []
        spans = local_spans(text, positions)
        picked = {k for k in (span_index_at(spans, p) for p in positions) if k >= 0}
    if not picked:
        return []
    out = []
    fix_taken = not after_error
    for k in sorted(picked):
        a, b = spans[k]
        sent = strip_markup(text[a:b].replace("’", "'"))
        if len(sent) < 12 or sent.endswith(("?", ":", "：")) or _HYPO.search(sent) or _SELF_UNABLE.match(sent):
            continue  # a question, a lead-in to a list, a hypothesis, the agent's own inability
        if _CODE_NOTE.match(sent):
            continue  # a note of what the code is ("`parse()` function in `x.py:9` - parses…"): the code says it
        if _ROOT.search(sent) and (not _ROOT_NEEDS_FAILURE.match(sent) or _FAILURE_WORD.search(sent)):
            out.append(_cand("root_cause", s, i, a, b, sent))
        elif _QUIRK.search(sent) and not _SELF_TALK.match(sent):
            out.append(_cand("quirk", s, i, a, b, sent))
        elif not fix_taken and _FIX_CUE.search(sent) and not _SELF_TALK.match(sent):
            out.append(_cand("quirk", s, i, a, b, sent))
            fix_taken = True
        elif _OTHER.search(sent) and not _SELF_TALK.match(sent):
            out.append(_cand("fact", s, i, a, b, sent))
        elif _MEASURE.search(sent) and not _SELF_TALK.match(sent):
            if not _LABEL.match(sent) or _measured(s, i, sent, every=True):
                out.append(_cand("fact", s, i, a, b, sent))
        elif not _SELF_TALK.match(sent):
            family = findings.kind_of(sent)
            if family and (family != "measured" or _measured(s, i, sent)):
                out.append(_cand(_FAMILY_KIND[family], s, i, a, b, sent))
    return out


_NUM = lazy_re(r"\d+[.,]\d+|\d{2,}")
#: a line naming a piece of code and where it is, then what it does
_CODE_NOTE = lazy_re(
    r"^`?[\w.()]+`?\s+(?:function|class|method|module|component|hook|type|interface|struct|enum|constant)\s+(?:in|at|of)\s", re.I
)
#: a "Label: figures" line, the shape of a plan's selling points ("Reduced Coordination: 5 agents vs 12")
_LABEL = lazy_re(r"^[\w .&/-]{1,40}:\s")
MEASURE_LOOKBACK = 40  # events before a measured claim searched for its numbers


def _measured(s: Scan, i: int, sent: str, *, every: bool = False) -> bool:
    """Whether a number of ``sent`` (one with a decimal or two digits) appears in a tool result or sub-agent
    result of this turn (back to the previous user prompt, at most ``MEASURE_LOOKBACK`` events): a measured
    finding, not a plan's estimate ("4 agents, 330 min vs 1095 min sequential").  With ``every`` each such
    number must appear there: a "Label: 5 agents vs 12 = 58% less" line whose result is worked out, not
    measured, does not count.  A compaction summary's figures were measured before it was written and count."""
    if s.events[i].kind == "compaction":
        return True
    nums = set(_NUM.findall(sent))
    if not nums:
        return False
    seen: set[str] = set()
    for j in range(i - 1, max(-1, i - 1 - MEASURE_LOOKBACK), -1):
        ev = s.events[j]
        if ev.kind in ("user_prompt", "compaction"):
            break
        if ev.kind in ("tool_result", "subagent_result"):
            seen.update(n for n in nums if n in ev.text)
            if seen and (not every or seen == nums):
                return True
    return False


#: ``findings`` families as fact kinds
_FAMILY_KIND = {
    "gap": "fact", "measured": "fact", "dead_end": "root_cause", "cause": "root_cause", "placement": "quirk",
    "environment": "quirk",
}


def _pasted(s: Scan, i: int) -> list[_Cand]:
    """The failing lines of a log the user pasted into prompt ``i`` (``findings.pasted_failure``)."""
    text = s.events[i].text
    span = findings.pasted_failure(text)
    if span is None:
        return []
    a, b = span
    shown = "; ".join(" ".join(x.split()) for x in text[a:b].splitlines() if x.strip())
    fact = clip("Pasted log: " + shown, FACT_LIMIT)
    return [_Cand("trial", fact, i, a, b, _key(fact), _toks(fact))]


def _after_error(s: Scan) -> set[int]:
    """Assistant messages that directly follow a failed tool result (only results between them)."""
    out: set[int] = set()
    events = s.events
    for i in s.assistants:
        j = i - 1
        while j >= 0 and (events[j].kind == "reasoning" or (events[j].kind == "assistant_text" and events[j].agent)):
            j -= 1
        if j >= 0 and events[j].kind == "tool_result" and events[j].text.strip() and tools.failed(events[j], deep=False):
            out.add(i)
    return out


class _Window(list):
    """A list that keeps its first ``CANDIDATE_WINDOW`` items and its last ``CANDIDATE_WINDOW`` ones (the middle
    is dropped as items arrive): candidates of one kind, where only both ends can be chosen."""

    def __init__(self) -> None:
        super().__init__()
        self._tail: deque[_Cand] = deque(maxlen=CANDIDATE_WINDOW)

    def append(self, item: _Cand) -> None:
        if len(self) < CANDIDATE_WINDOW:
            super().append(item)
        else:
            self._tail.append(item)

    def extend(self, items) -> None:
        for item in items:
            self.append(item)

    def items(self) -> list[_Cand]:
        return list(self) + list(self._tail)


class _Kept:
    """The candidates kept so far: their keys and a ``SimilarIndex`` of their token sets (a near duplicate of any of
    them is dropped, as a loop over all of them would; the index keeps that near linear on a long session).  A
    dropped duplicate from a later event marks the kept one restated there (``restated``: ``candidates`` counts a
    finding stated twice, and its latest statement for recency)."""

    __slots__ = ("keys", "toks", "order", "restated")

    def __init__(self, cands: Sequence[_Cand]) -> None:
        df = Counter(t for c in cands for t in c.toks)
        self.keys: dict[str, _Cand] = {}
        self.toks = SimilarIndex(jaccard=0.7, contain=0.85, rank=df)
        self.order: list[_Cand] = []  # kept candidates with token sets, in the index's order
        self.restated: dict[int, int] = {}  # id of a kept candidate -> latest event that restated it

    def dedupe(self, cands: list[_Cand]) -> list[_Cand]:
        out = []
        for c in cands:
            if not c.key:
                continue
            same = self.keys.get(c.key)
            if same is None:
                n = self.toks.find_similar(c.toks)
                same = self.order[n] if n is not None else None
            if same is not None:
                if c.ev > same.ev:
                    self.restated[id(same)] = max(self.restated.get(id(same), 0), c.ev)
                continue
            self.keys[c.key] = c
            if c.toks:
                self.toks.add(c.toks)
                self.order.append(c)
            out.append(c)
        return out


def _user_decided(s: Scan, i: int, cands: list[_Cand], decisions: Sequence[Decision]) -> list[_Cand]:
    """``cands`` (constraints of user prompt ``i``) without those that only restate a decision the user made in
    that prompt (``factprune.restates_decisions``)."""
    own = [
        d for d in decisions
        if d.origin in factprune.USER_ORIGINS and d.evidence is not None and d.evidence.event_index == i
    ]
    if not own:
        return cands
    text = s.events[i].text
    return [c for c in cands if not factprune.restates_decisions(c.text, c.start, c.end, text, own)]


def _collapse(by_kind: dict[str, list[_Cand]], extra: list[_Cand],
              prior: dict[int, float] | None = None) -> tuple[dict[str, list[_Cand]], list[_Cand]]:
    """Keep one fact per finding (``factprune.same_finding``): the one whose proposer weighs it clearly more
    (``prior``, by candidate id; a disproved claim over the bare failure it rests on), else the more informative
    one (``factprune.better``).
    Constraints are the user's words and are left alone; a compaction-summary fact never replaces another.
    Only facts sharing a distinctive token are compared (an index by token), so the cost stays near linear."""
    index: dict[str, list[_Cand]] = {}
    dropped: set[int] = set()

    def match(c: _Cand) -> _Cand | None:
        for tok in sorted(factprune.distinctive(c.text)):
            for k in index.get(tok, ()):
                if id(k) not in dropped and factprune.same_finding(c.text, k.text):
                    return k
        return None

    def keep(c: _Cand) -> None:
        for tok in factprune.distinctive(c.text):
            index.setdefault(tok, []).append(c)

    def weight(c: _Cand) -> float:
        return (prior or {}).get(id(c), PRIOR[c.kind])

    for kind in KIND_ORDER[1:]:
        for c in sorted(by_kind.get(kind, []), key=lambda c: (c.ev, c.start)):
            k = match(c)
            if k is None:
                keep(c)
            elif _wins(c, k, weight(c), weight(k)):
                dropped.add(id(k))
                keep(c)
            else:
                dropped.add(id(c))
    out = {kind: [c for c in items if id(c) not in dropped] for kind, items in by_kind.items()}
    return out, [c for c in extra if match(c) is None]


def _wins(c: _Cand, k: _Cand, pc: float, pk: float) -> bool:
    """Whether ``c`` replaces ``k``, a statement of the same finding: of two trial facts the stronger shape; else
    the one that states the resolution (``factprune.resolves``); else the one whose proposer weighs it clearly more;
    else the more informative (``factprune.better``, the later on ties)."""
    if c.kind == k.kind == "trial" and pc != pk:
        return pc > pk  # two failures the calls show: the stronger shape (blocked, changed retry) tells it
    rc, rk = factprune.resolves(c.text), factprune.resolves(k.text)
    if rc != rk:
        return rc
    if abs(pc - pk) >= 1.5:  # another class of proposal (a disproved claim over the failure it rests on)
        return pc > pk
    return factprune.better(c.text, k.text) if c.ev >= k.ev else not factprune.better(k.text, c.text)


#: the prior of each internal kind (``candidates``): how much the shape that proposed a line says it matters
PRIOR = {"constraint": 4.0, "subagent": 2.0, "trial": 2.2, "root_cause": 2.4, "quirk": 2.4, "fact": 1.6}
SUMMARY_PRIOR = 0.8  # a compaction summary's line: the next context holds the summary already
TRIAL_PRIOR = {0: 2.6, 1: 2.6, 2: 2.2, 3: 1.4}
TRAP_PRIOR = 2.8  # an environment trap the shell calls show (``shellenv``), an import an edit dropped (``edits``)  # ``trials.Trial.rank``: blocked, changed retry, capability, other


def message_chars(s: Scan) -> int:
    """Characters of the session's messages (prompts, answers, sub-agent results, summaries): its size for
    ``candidates.budget``."""
    events = s.events
    return sum(len(events[i].text) for lst in (s.users, s.assistants, s.subagent_results, s.compactions) for i in lst)


def _decided_spans(s: Scan, decisions: Sequence[Decision]) -> dict[int, list[tuple[int, int]]]:
    """Event index -> spans of that event's text that Decision Log entries quote (their evidence)."""
    out: dict[int, list[tuple[int, int]]] = {}
    for d in decisions:
        ev = d.evidence
        if ev is None or not ev.quote or not 0 <= ev.event_index < len(s.events):
            continue
        at = s.events[ev.event_index].text.find(ev.quote)
        if at >= 0:
            out.setdefault(ev.event_index, []).append((at, at + len(ev.quote)))
    return out


def propose(s: Scan, decisions: Sequence[Decision] = ()) -> list[Candidate]:
    """Every Established Facts candidate of ``s`` (module rules), deduplicated, one per finding, with its prior."""
    from pipeline.stages.rules import reports, scope
    from pipeline.stages.rules.workflow import is_real_prompt

    raw: dict[str, _Window] = {k: _Window() for k in KIND_ORDER}
    prior: dict[int, float] = {}
    for i in s.users:
        if paste.is_template(s.events[i].text):
            continue  # an expanded command or skill template: the harness's text, nothing the user found or ruled
        raw["trial"].extend(_pasted(s, i))
        if is_real_prompt(s.events[i].text):
            raw["constraint"].extend(_user_decided(s, i, _constraints(s, i), decisions))
    for i in s.subagent_results:
        raw["subagent"].extend(_review(s, i) or _subagent(s, i))
    for t in shellenv.build(s) + edits.dropped_imports(s):
        text = clip(t.text, FACT_LIMIT)
        c = _Cand("trial", text, t.ev, t.start, t.end, _key(text), _toks(text))
        prior[id(c)] = TRAP_PRIOR  # it explains the failures it rests on: above their bare error lines
        raw["trial"].append(c)
    for t in trials.build(s):
        text = clip(t.text, FACT_LIMIT)
        c = _Cand("trial", text, t.ev, t.start, t.end, _key(text), _toks(text))
        prior[id(c)] = TRIAL_PRIOR.get(t.rank, 1.4)
        raw["trial"].append(c)
    decided = _decided_spans(s, decisions)
    for p in (*struggle.propose(s), *reports.propose(s), *scope.propose(s)):
        if _LABEL.match(p.text) and _NUM.search(p.text) and not _measured(s, p.ev, p.text, every=True):
            continue  # a "Label: 3 calls vs 14 = 78 % less" line works figures out, it measured nothing
        if any(a < p.end and p.start < b for a, b in decided.get(p.ev, ())):
            continue  # the Decision Log says it
        text = clip(p.text, FACT_LIMIT)
        c = _Cand(p.kind if p.kind in raw else "fact", text, p.ev, p.start, p.end, _key(text), _toks(text))
        prior[id(c)] = p.prior
        raw[c.kind].append(c)
    raw["quirk"].extend(_harness_errors(s))
    errs = _after_error(s)
    seen_texts: set[str] = set()
    for i in s.assistants:
        text = s.events[i].text
        if text in seen_texts and i not in errs:  # a repeated message adds nothing new
            continue
        seen_texts.add(text)
        found = _review(s, i)
        if found:
            raw["subagent"].extend(found)
            continue
        for c in _assistant(s, i, i in errs):
            raw[c.kind].append(c)
    summary_window = _Window()
    for i in s.compactions:
        summary_window.extend(c for c in _assistant(s, i, False) if c.kind in ("root_cause", "quirk"))
    cands = {k: w.items() for k, w in raw.items()}
    summary = summary_window.items()
    kept = _Kept([c for k in KIND_ORDER for c in cands[k]] + summary)
    # one line per statement: the strongest proposal of it stays (constraints first, then by prior), the earliest
    # on ties; a compaction summary's lines only where no event of the session says the same
    flat = sorted(((k, c) for k in KIND_ORDER for c in cands[k]),
                  key=lambda kc: (kc[0] != "constraint", -prior.get(id(kc[1]), PRIOR[kc[0]]), kc[1].ev, kc[1].start))
    survivors = {id(c) for c in kept.dedupe([c for _, c in flat])}
    by_kind = {k: [c for c in cands[k] if id(c) in survivors] for k in KIND_ORDER}
    extra = kept.dedupe(summary)
    by_kind, extra = _collapse(by_kind, extra, prior)
    by_kind = {k: v if k == "constraint" else [c for c in v if not _superseded(s, c)] for k, v in by_kind.items()}
    extra = [c for c in extra if not _superseded(s, c)]
    from pipeline.restore.guard import addresses_agent

    out = [
        Candidate(_OUT_KIND.get(c.kind, c.kind), c.text, c.ev, c.start, c.end, c.kind, prior.get(id(c), PRIOR[c.kind]),
                  restated=kept.restated.get(id(c), 0))
        for k in KIND_ORDER for c in by_kind.get(k, [])
        if not addresses_agent(c.text)  # an order to "the next agent" is what some text said, never a fact to hand over
        and not (k in ("fact", "quirk", "root_cause") and struggle.claimed(c.text))  # "The build is working again"
    ]
    out.extend(Candidate(_OUT_KIND.get(c.kind, c.kind), c.text, c.ev, c.start, c.end, "summary", SUMMARY_PRIOR)
               for c in extra)
    return out


def build(s: Scan, decisions: Sequence[Decision] = ()) -> list[Fact]:
    """Established Facts with evidence: every candidate ``propose`` finds, weighed and picked to the session's
    byte budget (``candidates``).

    ``decisions`` is the Decision Log built from the same scan (``decisions.build(s)``): a user sentence that is
    the evidence of a user decision and only restates it is not repeated as a constraint (``factprune``).
    """
    cands = propose(s, decisions)
    candidates.weigh(cands, len(s.events))
    out = []
    for c in candidates.pick(cands, candidates.budget(message_chars(s))):
        q = quote(s.events[c.ev].text, c.start, c.end)
        if q:
            out.append(Fact(text=c.text, kind=c.kind, evidence=Evidence(event_index=c.ev, quote=q)))
    return out
