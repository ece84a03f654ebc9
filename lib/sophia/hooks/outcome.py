"""How a session ended: SUCCESS, FAILURE, PARTIAL or UNKNOWN, with the evidence in a few words. Stdlib only.

Structure first: a session cut off (a call pending, the user's interruption, a tool result with no
closing message), the last test/build/lint run's verdict (kept by ``sophia.hooks.transcript`` as
``last_check``), the last call that did something (a cancelled or denied call never ran: it is neither
a success nor a failure; a read that finds nothing is no failure of the task), and the user's last
prompts (praise, a complaint, pasted failure output). Then the words of the last assistant message, in
any language the tables of ``sophia.outcome_words`` know: done, failed, partly done, or waiting on the
user ("once you have the key, I'll finish", "let me know when", a question asking the user to decide),
which is PARTIAL (the task is not done), or UNKNOWN when nothing was done yet. A last message that
says nothing of the work (an answer to a question) defers to the latest earlier message that does.
"""

from __future__ import annotations

import re
from typing import Any

from .. import evidence
from .. import outcome_words as words

SUCCESS, FAILURE, PARTIAL, UNKNOWN = "SUCCESS", "FAILURE", "PARTIAL", "UNKNOWN"
DONE, FAILED, MIXED, PARTLY, WAITING = "done", "failed", "mixed", "partial", "waiting"
# calls that only look: their failure (a grep that finds nothing) is no failure of the task
PROBE_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "ToolSearch", "TodoWrite",
                         "TodoRead", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "NotebookRead"})
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
MANY_CALLS = 10  # with at least this many calls, half of them failing outweighs a claim of done
ASK_TAIL = 600  # a question asking the user to decide counts in the message's last characters

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_CLAUSE_ENDS = frozenset(".!?;:\n。！？；：，,")
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？", "\n")
# what the client writes in the agent's place when a turn dies (an API error, a usage limit): no message
CLIENT_ERRORS = ("api error", "claude ai usage limit reached", "request was aborted", "prompt is too long",
                 "credit balance is too low", "invalid api key")


_tables: dict[str, words.Words] = {}


def _hits(name: str, text: str) -> list[words.Hit]:
    """The words of table ``name`` of ``sophia.outcome_words`` in lower-case ``text``, in order (each
    table made ready once, on first use)."""
    table = _tables.get(name)
    if table is None:
        table = _tables[name] = words.Words(getattr(words, name))
    return table.find(text)


def _find(name: str, text: str) -> words.Hit | None:
    found = _hits(name, text)
    return found[0] if found else None


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the spans blanked (positions kept), so a later pattern cannot match inside them."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _cut_out(name: str, text: str) -> tuple[str, list[words.Hit]]:
    hits = _hits(name, text)
    return _mask(text, [(a, b) for a, b, _ in hits]), hits


def _clauses(text: str) -> str:
    """The text without the clauses conditional words open ("if it fails, try X"): advice, no verdict."""
    spans = []
    for start, end, _ in _hits("CONDITIONAL", text):
        stop = next((i for i in range(end, len(text)) if text[i] in _CLAUSE_ENDS), len(text))
        spans.append((start, stop))
    return _mask(text, spans)


# ---------------------------------------------------------------- what the last message says


def read_message(message: str | None) -> tuple[str | None, str]:
    """(what the message says of the work, the words that say it): done, failed, mixed (both, a failure
    after the success), partial (work left), waiting (on the user), or None."""
    text = _CODE.sub(" ", message or "").lower()
    wait = _find("WAITING", text)
    if wait:
        return WAITING, wait[2]
    body = _clauses(text)
    body, clean = _cut_out("NO_FAILURE", body)
    cured, _ = _cut_out("RESOLVED", body)
    fails = _hits("FAILED", cured)
    body = _mask(body, [(a, b) for a, b, _ in fails])
    dones = sorted([*clean, *(d for d in _hits("DONE", body) if not _negated(d, fails, body))])
    ask = "" if dones else _asks(text)
    if ask:
        return WAITING, ask
    partial = _find("PARTIAL", body) if dones or fails else None
    if partial:
        return PARTLY, partial[2]
    if fails and dones:
        return _failure_and_success(fails, dones)
    if fails:
        return FAILED, fails[-1][2]
    return (DONE, dones[0][2]) if dones else (None, "")


def _negated(done: words.Hit, fails: list[words.Hit], body: str) -> bool:
    """The success word is what a failure word says could not be done ("couldn't complete", "无法完成",
    "unable to finish"): it follows one with at most "to" between."""
    return any(0 <= done[0] - end <= 4 and body[end:done[0]].strip() in ("", "to") for _, end, _ in fails)


def _failure_and_success(fails: list[words.Hit], dones: list[words.Hit]) -> tuple[str, str]:
    """A failure told and then cured ("it failed because ...; fixed") is done; a failure after the
    success, or one no fix follows, is mixed."""
    fixes = [hit for hit in dones if _find("FIXED", hit[2])]
    if fixes and fixes[-1][0] > fails[-1][0]:
        return DONE, fixes[-1][2]
    return MIXED, f"{dones[0][2]} / {fails[-1][2]}"


def _asks(text: str) -> str:
    """The words of a question near the end that asks the user to decide before the work goes on."""
    tail = text[-ASK_TAIL:]
    for q, c in enumerate(tail):
        if c in "?？":
            start = max(tail.rfind(end, 0, q) for end in _SENTENCE_ENDS) + 1
            hit = _find("ASK", tail[start:q + 1])
            if hit:
                return hit[2]
    return ""


def reports_done(text: str) -> bool:
    """The text has a word, in any known language, that reports work done."""
    return bool(_find("DONE", text.lower()))


def hedged(message: str) -> bool:
    """The message asks the user to check its claim ("should work now", "please try")."""
    return bool(_find("HEDGE", _CODE.sub(" ", message).lower()))


# ---------------------------------------------------------------- what the user said


def user_reaction(prompts: list[str]) -> str | None:
    """The user's latest judgement in their last prompts: complaint (their words, or failure output they
    pasted) or praise; the later one wins."""
    verdict = None
    for p in prompts:
        text = _CODE.sub(" ", p).lower()
        bad, good = _find("COMPLAINT", text), _find("PRAISE", text)
        if bad or good:
            verdict = "complaint" if bad and (not good or bad[0] > good[0]) else "praise"
        elif evidence.judge({"reader": False, "progs": []}, p, is_error=False).failed:
            verdict = "complaint"
    return verdict


# ---------------------------------------------------------------- what the calls show


class Calls:
    """The session's calls as evidence: how many were judged, failed, succeeded doing something, and
    the last one that did something (neither a probe nor a call that never ran)."""

    __slots__ = ("judged", "errors", "done", "last_doing", "actions")

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = actions
        judged = [a for a in actions if a.get("outcome") != "skipped"]
        doing = [a for a in judged if not is_probe(a) and a.get("outcome") in ("ok", "error")]
        self.judged = len(judged)
        self.errors = sum(1 for a in judged if a.get("outcome") == "error")
        self.done = sum(1 for a in doing if a.get("outcome") == "ok")
        self.last_doing = doing[-1] if doing else None

    @property
    def all_failed(self) -> bool:
        return bool(self.judged) and self.errors == self.judged

    @property
    def last_failed(self) -> bool:
        return self.last_doing is not None and self.last_doing.get("outcome") == "error"

    def edited_after(self, call_id: Any) -> bool:
        """A file was edited after the call (True when the call is not among the kept actions)."""
        ids = [a.get("id") for a in self.actions]
        if call_id not in ids:
            return True
        after = self.actions[len(ids) - ids[::-1].index(call_id):]
        return any(a.get("tool") in EDIT_TOOLS and a.get("outcome") == "ok" for a in after)


def is_probe(action: dict[str, Any]) -> bool:
    """A call that only looks (a Read, a search, ``ls``, ``git status``)."""
    tool = action.get("tool")
    if tool in PROBE_TOOLS:
        return True
    if tool != "Bash":
        return False
    head = str(action.get("summary") or "").split()
    if not head:
        return False
    if head[0] == "git":
        return evidence.git_reads(head[1:])
    return head[0] in evidence.READERS


def last_check(transcript: dict[str, Any]) -> dict[str, Any] | None:
    """The last test, build or lint run the transcript reader saw, with its judged outcome."""
    rec = transcript.get("last_check")
    return rec if isinstance(rec, dict) and rec.get("outcome") in ("ok", "error", "unknown") else None


def _check_words(check: dict[str, Any]) -> str:
    proof = [p for p in check.get("proof") or [] if isinstance(p, str)]
    what = f"the last {check.get('check') or 'check'} run ({check.get('command') or 'a command'})"
    return what + (f": {proof[-1][:120]}" if proof else "")


# ---------------------------------------------------------------- the verdict


def judge_outcome(actions: list[dict[str, Any]], last_message: str | None, transcript: dict[str, Any] | None = None,
                  *, turn_ended: bool = False) -> tuple[str, str]:
    """(outcome, the evidence in a few words) of a session. ``turn_ended``: the Stop payload carried the
    turn's last message, so the turn ended even if the transcript does not show it yet."""
    tr = transcript or {}
    calls = Calls(actions)
    ended = "the last turn died on a client error" if client_error(last_message) else None
    ended = ended or (None if turn_ended else cut_off(tr))
    if ended:
        if calls.all_failed:
            return FAILURE, f"{ended}; every call failed"
        return (PARTIAL if calls.done else UNKNOWN), ended
    said, cue, earlier = _verdict(last_message, tr)
    if said is None:
        prompts = [p for p in tr.get("recent_prompts") or [] if isinstance(p, str)][-2:]
        return _silent(_Evidence(calls, last_check(tr), user_reaction(prompts), tr.get("tail") == "prompt"))
    outcome, reason = _worded(said, earlier, calls, tr, last_message or "")
    return outcome, f"{reason} ('{cue}')"


def _worded(said: str, earlier: bool, calls: Calls, tr: dict[str, Any], last: str) -> tuple[str, str]:
    """The verdict when a message says something of the work (``earlier``: not the last message)."""
    who = "an earlier message" if earlier else "the last message"
    if said == WAITING:
        if calls.done:
            return PARTIAL, "waits on the user; the work is not finished"
        return UNKNOWN, "waits on the user before anything was done"
    if said in (MIXED, PARTLY):
        return PARTIAL, f"{who} reports work left or failures beside success"
    if said == FAILED:
        if not calls.done:
            return FAILURE, f"{who} reports failure" + (f"; all {calls.judged} calls failed" if calls.all_failed else "")
        return PARTIAL, f"{who} reports failure; {calls.done} call{'' if calls.done == 1 else 's'} did something"
    prompts = [p for p in tr.get("recent_prompts") or [] if isinstance(p, str)][-2:]
    ev = _Evidence(calls, last_check(tr), user_reaction(prompts), tr.get("tail") == "prompt")
    return _claimed(ev, last, "an earlier message reported it done" if earlier else "reported done")


class _Evidence:
    __slots__ = ("calls", "check", "user", "unanswered")

    def __init__(self, calls: Calls, check: dict[str, Any] | None, user: str | None, unanswered: bool) -> None:
        self.calls, self.check, self.user, self.unanswered = calls, check, user, unanswered

    @property
    def check_failed(self) -> bool:
        return self.check is not None and self.check.get("outcome") == "error"

    @property
    def check_passed(self) -> bool:
        """The last check passed and nothing was edited after it."""
        return (self.check is not None and self.check.get("outcome") == "ok"
                and not self.calls.edited_after(self.check.get("id")))


def _verdict(last_message: str | None, tr: dict[str, Any]) -> tuple[str | None, str, bool]:
    """What the last message says; when it says nothing of the work (an answer, an explanation), what
    the latest earlier message of the session says of it (waiting and asking are not carried over:
    the user answered them)."""
    said, cue = read_message(last_message)
    if said is not None:
        return said, cue, False
    last = (last_message or "").strip()
    texts = [t for t in tr.get("assistant_texts") or []
             if isinstance(t, str) and t.strip() != last and not client_error(t)]
    for text in reversed(texts):
        said, cue = read_message(text)
        if said not in (None, WAITING):
            return said, cue, True
    return None, "", False


def _claimed(ev: _Evidence, last: str, why: str) -> tuple[str, str]:
    """The message says it is done: believed unless the evidence disagrees."""
    calls = ev.calls
    if ev.check_failed and ev.check is not None:
        return PARTIAL, f"{why}, but {_check_words(ev.check)} failed"
    if calls.last_failed:
        return PARTIAL, f"{why}, but the last call that did something failed"
    if ev.user == "complaint" and ev.unanswered:
        return PARTIAL, f"{why}, but the user's last prompt reports a problem and got no answer"
    if ev.user == "complaint" and hedged(last):
        return UNKNOWN, f"{why} without a check, right after the user said it was not working"
    if calls.judged >= MANY_CALLS and calls.errors * 2 >= calls.judged:
        return PARTIAL, f"{why}, but {calls.errors} of {calls.judged} calls failed"
    extra = "; the last check passed" if ev.check_passed else ""
    return SUCCESS, why + extra + ("; the user approved" if ev.user == "praise" else "")


def _silent(ev: _Evidence) -> tuple[str, str]:
    """No verdict in words: the calls, the last check and the user's words decide, else UNKNOWN."""
    calls = ev.calls
    if calls.all_failed:
        return FAILURE, f"all {calls.judged} calls failed"
    if ev.check_failed and ev.check is not None:
        return PARTIAL, f"{_check_words(ev.check)} failed"
    if calls.last_failed:
        return PARTIAL, "the last call that did something failed"
    if ev.user == "complaint":
        return UNKNOWN, "the user's last prompt reported a problem; no answer says it was solved"
    if ev.check_passed and ev.check is not None:
        return SUCCESS, f"{_check_words(ev.check)} passed, and nothing was edited after it"
    if ev.user == "praise":
        return SUCCESS, "the user approved"
    return UNKNOWN, "no verdict in the last message"


def client_error(message: str | None) -> bool:
    """The message is the client's note that the turn died (an API error), not the agent's words."""
    return (message or "").lstrip()[:40].lower().startswith(CLIENT_ERRORS)


def cut_off(tr: dict[str, Any]) -> str | None:
    """How the session was cut off, if it was: a tool call never answered, the user's interruption, or
    a tool result the agent never followed with a message."""
    tail = tr.get("tail")
    pending = tr.get("pending_calls")
    if tail == "call" and isinstance(pending, dict) and pending:
        rec = list(pending.values())[-1]
        what = " ".join(str(rec.get(k) or "") for k in ("tool", "summary")).strip() if isinstance(rec, dict) else ""
        return f"ended with a {what or 'tool'} call still pending"
    if tail == "interrupt":
        return "the user interrupted the last turn"
    if tail == "result":
        return "ended after a tool result, with no closing message"
    return None
