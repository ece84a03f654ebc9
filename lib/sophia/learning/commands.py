"""A session's shell commands, read and normalised for the zero-token learners. Standard library only.

Each Bash call of a transcript becomes a :class:`Command`: its text as typed (only secrets redacted
when shown), its segments without plumbing, the command it was run for (``main``), a key that makes two
commands variants of each other (program and subcommand or script), and its :mod:`sophia.evidence`
verdict (ok / failed / unknown / cancelled / denied / interrupted) with the output lines that proved it.
The playbook's verbs (:func:`classify`: test / build / lint / run / setup) live here too.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from .. import evidence
from ..kinds import one_line
from ..transcript_entries import (
    block_text,
    blocks,
    call_record,
    clean_prompt,
    entries,
    judge_result,
    tool_calls,
    tool_results,
)

TYPE_CHECKING = False  # typing costs a few ms to import: annotations only
if TYPE_CHECKING:
    from typing import Any

CMD_CHARS = 120
USER_STEP = "the user stepped in"  # a step of a fix: the user's reply between a failure and its retry
ERR_CHARS = 100

# Read-only inspection: never a lesson, never a step (first word; git: evidence.git_reads).
HEARTBEATS = frozenset(
    ["ls", "ll", "pwd", "cat", "echo", "printf", "head", "tail", "wc", "grep", "egrep", "rg", "ag", "find", "fd", "which", "type", "whoami", "date", "sleep", "true", "false", "env", "printenv", "readlink", "realpath", "stat", "file", "du", "df", "tree", "less", "more", "ps", "id", "uname", "hostname", "test", "[", "clear", "history", "jq", "sort", "uniq", "cut", "awk", "diff", "cmp", "basename", "dirname", "lsof", "top", "free", "uptime", "nproc", "wait"])
PREP = frozenset(["cd", "pushd", "popd", "export", "source", ".", "set", "unset", "alias"])
WRAPPERS = frozenset(["sudo", "nohup", "time", "exec", "command", "nice", "stdbuf"])
INTERPRETERS = frozenset(["python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node"])
RUNNERS = {"npx": 1, "pnpx": 1, "bunx": 1, "uvx": 1}  # the tool named next is the command
RUN_SUB = frozenset(["run", "exec"])  # uv run X, poetry run X, bundle exec X, pnpm exec X
REDIRECTS = frozenset({">", ">>", ">&", "<", "&>", "&>>", "<<", "<<<", ">|"})
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
_ERRLINE = re.compile(r"error|fail|not found|no such|denied|cannot|can't|invalid|refused|timed out|"
                      r"exception|fatal|unable|missing|not a |undefined|unknown|abort", re.I)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DECOR = re.compile(r"^[\W_]*$")
_SUBST = re.compile(r"\$\([^()]*\)")
_HELD = re.compile(r"\x00(\d+)\x00")


# ---------------------------------------------------------------- commands: parse and normalise


def redact(text: str) -> str:
    from ..redact import redact as _redact  # ~9 ms to import: only where a command is read

    return _redact(text)


def _tokens(cmd: str) -> list[str]:
    """The words of a command, a ``$(...)`` substitution kept whole and as typed (``make -j$(nproc)``)."""
    kept: list[str] = []

    def hold(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    held = _SUBST.sub(hold, cmd.replace("\\\n", " "))
    try:
        lex = shlex.shlex(held, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        words = list(lex)
    except ValueError:  # unbalanced quotes, a heredoc: the plain words
        words = held.split()
    return [_HELD.sub(lambda m: kept[int(m.group(1))], w) for w in words] if kept else words


def segments(cmd: str) -> list[list[str]]:
    """The commands of a chain that run for their own sake: ``a && b; c`` -> a, b, c. What a pipe
    feeds (``| head``), a fallback (``|| true``) and redirections are output plumbing: dropped."""
    out: list[list[str]] = []
    cur: list[str] = []
    keep, skip_next = True, False
    for tok in _tokens(cmd):
        if skip_next:
            skip_next = False
        elif tok in SEPARATORS:
            if keep and cur:
                out.append(cur)
            cur, keep = [], tok not in ("|", "||", "|&")
        elif tok in REDIRECTS:
            skip_next = True
            if cur and cur[-1].isdigit():
                cur.pop()
        else:
            cur.append(tok)
    if keep and cur:
        out.append(cur)
    return [_unwrap(s) for s in out if _unwrap(s)]


def _unwrap(seg: list[str]) -> list[str]:
    """Drop ``sudo``, ``timeout 60``, ``env A=B`` and leading assignments."""
    i = 0
    while i < len(seg):
        w = seg[i]
        if "=" in w and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
            i += 1
        elif w in WRAPPERS or w == "env":
            i += 1
            while i < len(seg) and seg[i].startswith("-"):
                i += 1
        elif w == "timeout":
            i += 1
            while i < len(seg) and (seg[i].startswith("-") or re.match(r"^\d+[smhd]?$", seg[i])):
                i += 1
        else:
            break
    return seg[i:]


def _prog(seg: list[str]) -> str:
    return seg[0].rsplit("/", 1)[-1] if seg else ""


def _positional(seg: list[str], start: int = 1) -> list[str]:
    return [w for w in seg[start:] if not w.startswith("-")]


def is_heartbeat(seg: list[str]) -> bool:
    prog = _prog(seg)
    if prog in HEARTBEATS or prog in PREP:
        return True
    pos = _positional(seg)
    if prog == "git" and evidence.git_reads(seg[1:]):
        return True
    if prog == "kill" and pos and all(w.startswith(("$", "%")) for w in pos):
        return True  # job control of what the chain started (``cmd & PID=$!; sleep 9; kill $PID``)
    return any(w in ("--version", "--help", "-h", "-V") for w in seg[1:2]) or (len(seg) == 2 and seg[1] == "help")


def _inline(seg: list[str]) -> bool:
    """Inline code (``python -c``, ``node -e``, a heredoc): not a reusable command."""
    return _prog(seg) in INTERPRETERS and any(w in ("-c", "-e", "--eval", "-") for w in seg[1:3])


def _word(w: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9:_-]*$", w))


def command_key(seg: list[str]) -> str:
    """What makes two commands variants of each other: the program and its subcommand or script."""
    prog = _prog(seg)
    if prog in RUNNERS and len(seg) > 1:
        return f"{prog} {command_key(seg[1:])}"
    pos = _positional(seg)
    if prog in INTERPRETERS or prog.startswith("python"):
        if "-m" in seg[1:] and seg.index("-m") + 1 < len(seg):
            return f"{prog} -m {seg[seg.index('-m') + 1]}"
        return f"{prog} {pos[0].rsplit('/', 1)[-1]}" if pos else prog
    if pos and pos[0] in RUN_SUB and len(pos) > 1:
        return f"{prog} {pos[0]} {pos[1]}"
    return f"{prog} {pos[0]}" if pos and _word(pos[0]) and pos[0] not in _OPTION_VALUES else prog


_OPTION_VALUES = frozenset(["true", "false", "yes", "no", "on", "off"])  # an option's value, no subcommand


class Command:
    """One shell command of a session: its segments, main segment, key, evidence and error line.

    ``ok``: True/False for a call whose verdict is plain (tests, the buffer), or the call's
    :class:`sophia.evidence.Evidence`; ``cid``: the tool call's id (the evidence a lesson keeps)."""

    __slots__ = ("raw", "segs", "main", "key", "evidence", "error", "chain", "edit", "cid", "note")

    def __init__(self, raw: str, ok: bool | evidence.Evidence, error: str | None = None, chain: str = "main",
                 edit: str | None = None, cid: str | None = None, note: str | None = None):
        self.raw, self.error, self.chain, self.edit, self.cid, self.note = raw, error, chain, edit, cid, note
        self.evidence = ok if isinstance(ok, evidence.Evidence) else \
            evidence.Evidence(evidence.OK if ok else evidence.FAILED, "given")
        self.segs = [] if edit or note else segments(raw)
        self.main = _main_segment(self.segs)
        self.key = command_key(self.main) if self.main and not _inline(self.main) else None

    @property
    def ok(self) -> bool:
        """It ran and its output proves it did its work (a masked or unknown result is not ok)."""
        return self.evidence.verdict == evidence.OK

    @property
    def failed(self) -> bool:
        """It ran and did not do its work (a cancelled, refused or interrupted call did not run)."""
        return self.evidence.verdict == evidence.FAILED

    @property
    def heartbeat(self) -> bool:
        return self.edit is None and self.note is None and (self.key is None or all(is_heartbeat(s) for s in self.segs))

    def display(self, project: str | None = None, *, whole: bool = True, root: bool = False) -> str:
        """The command on one short redacted line: its working directory (relative when inside the
        project; ``root``: a ``cd`` to the project root is shown too), then its segments (``whole``) or
        its main one, without heartbeats and plumbing."""
        if self.note:
            return self.note
        if self.edit:
            return f"edit {self.edit}"
        parts, where = [], _where(self.segs, project, root)
        for s in self.segs if whole else [self.main]:
            if _prog(s) in PREP or (is_heartbeat(s) and s is not self.main):
                continue
            parts.append(" ".join(shlex.quote(w) if re.search(r"\s", w) and not w.startswith("$(") else w
                                  for w in s))
        text = " && ".join(parts) or self.raw
        return one_line(redact(f"cd {where} && {text}" if where else text), CMD_CHARS)


def targets(c: Command) -> set[str]:
    """What a command acts on: its main segment's positional words beyond its key (the program and its
    subcommand): ``npm info left-pad`` -> {left-pad}."""
    key = set((c.key or "").split())
    return {w for w in _positional(c.main) if w not in key and w.rsplit("/", 1)[-1] not in key}


def _main_segment(segs: list[list[str]]) -> list[str]:
    """The command a chain is run for: the last one that is neither a heartbeat nor preparation."""
    useful = [s for s in segs if not is_heartbeat(s)]
    doers = [s for s in useful if _prog(s) not in ("mkdir", "chmod", "touch", "rm", "mv", "cp", "ln")]
    pick = doers or useful or [s for s in segs if _prog(s) not in PREP]
    return pick[-1] if pick else []


def _where(segs: list[list[str]], project: str | None, root_too: bool = False) -> str | None:
    """The directory a ``cd`` in the chain moves to, relative when inside the project (None: none,
    or the project root unless ``root_too``)."""
    cds = [s[1] for s in segs if _prog(s) == "cd" and len(s) > 1]
    if not cds:
        return None
    if not project:
        return cds[-1]
    d = cds[-1].rstrip("/")
    root = project.rstrip("/")
    if d == root:
        return "." if root_too else None
    return d[len(root) + 1:] if d.startswith(root + "/") else d


def error_line(text: Any, exit_code: Any = None) -> str:
    """The most telling line of an error output, redacted, on one line."""
    lines = [ln.strip() for ln in _ANSI.sub("", str(text or "")).splitlines()]
    lines = [ln for ln in lines if ln and not _DECOR.match(ln) and not re.match(r"^exit code \d+$", ln, re.I)]
    tb = [ln for ln in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln)]
    hits = tb[-1:] or [ln for ln in lines if _ERRLINE.search(ln)][:1] or lines[:1]
    if hits:
        line = hits[0]
        at = lines.index(line)
        if len(line.split()) < 2 and at + 1 < len(lines):  # a bare "error:" heading: its message follows
            later = [ln for ln in lines[at + 1:] if re.match(r"^error\b", ln, re.I) and len(ln.split()) > 1]
            line = later[-1] if later else f"{line} {lines[at + 1]}"  # nix: context lines, then the error
        return one_line(redact(line), ERR_CHARS)
    return f"exit {exit_code}" if exit_code not in (None, "", 0) else "an error"


def error_class(error: str) -> str:
    """An error with its particulars masked (paths, quoted names, numbers): what recurs."""
    e = error.lower()
    e = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "Q", e)
    e = re.sub(r"(~|\.{0,2})/[^\s:]*", "P", e)
    e = re.sub(r"\b0x[0-9a-f]+\b|\d+", "N", e)
    return " ".join(e.split())[:60]


# ---------------------------------------------------------------- the session's commands


class _Reader:
    """Pairs each Bash call of a transcript with its result (judged by :mod:`sophia.evidence`); file
    edits are kept as steps."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[int, str, str, dict[str, Any]]] = {}
        self.slots: list[Command | None] = []
        self.cwd: str | None = None

    def line(self, obj: dict[str, Any]) -> None:
        if self.cwd is None and isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
        chain = "side" if obj.get("isSidechain") is True else "main"
        if obj.get("type") == "assistant":
            for call in tool_calls(obj):
                self.call(call, chain)
        elif obj.get("type") == "user":
            for result in tool_results(obj):
                self.result(result)
            if chain == "main" and self.slots and _prompt(obj):
                self.slots.append(Command("", True, chain=chain, note=USER_STEP))

    def call(self, call: dict[str, Any], chain: str) -> None:
        inp = call["input"]
        if call["tool"] == "Bash" and isinstance(inp.get("command"), str):
            self.pending[call["id"]] = (len(self.slots), inp["command"], chain, call_record(call))
            self.slots.append(None)
        elif call["tool"] in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
            f = inp.get("file_path") or inp.get("notebook_path")
            if isinstance(f, str) and f:
                self.slots.append(Command("", True, chain=chain, edit=one_line(redact(f.rsplit("/", 1)[-1]), 60)))

    def result(self, result: dict[str, Any]) -> None:
        if result["id"] not in self.pending:
            return
        slot, cmd, chain, record = self.pending.pop(result["id"])
        ev = judge_result(record, result)
        if ev.verdict in evidence.NOT_RUN:
            return  # cancelled, refused or interrupted: neither a failure nor a success
        error = error_line(result["text"]) if ev.failed and result["error"] else \
            one_line(redact("; ".join(ev.proof)), ERR_CHARS) if ev.failed else None
        self.slots[slot] = Command(cmd, ev, error or None, chain, cid=result["id"])


def _prompt(obj: dict[str, Any]) -> bool:
    """A user entry that holds words the user typed (not a tool result, a command echo, a reminder)."""
    if obj.get("isMeta") or obj.get("isCompactSummary") or any(b.get("type") == "tool_result" for b in blocks(obj)):
        return False
    msg = obj.get("message")
    return clean_prompt(block_text(msg.get("content") if isinstance(msg, dict) else None)) is not None


def commands_from_transcript(path: str | Path) -> tuple[list[Command], str | None]:
    """The session's commands (in call order) and its working directory. Lines without a tool call
    or result are not parsed (a 1.3 MB transcript reads in a few ms)."""
    r = _Reader()
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return [], None
    with fh:
        for raw in fh:
            if r.cwd is not None and b'"tool_' not in raw and b'"user"' not in raw and b'"call_id"' not in raw:
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            for entry in entries(obj) if isinstance(obj, dict) else ():  # a Codex line: what it stands for
                if entry.get("type") in ("user", "assistant") or r.cwd is None:
                    r.line(entry)
    return [c for c in r.slots if c is not None], r.cwd


def commands_from_actions(actions: list[dict[str, Any]]) -> list[Command]:
    """The action buffer's Bash lines (first 3 whitelisted words, outcome, exit code) and file edits.
    The buffer holds no output: a call that exited 0 is not proven (``unknown``), a failure is one."""
    out: list[Command] = []
    for a in actions:
        if not isinstance(a, dict):
            continue
        if a.get("tool") == "Bash" and isinstance(a.get("summary"), str) and a["summary"].strip():
            if "[interrupted]" in a["summary"] or a.get("outcome") == "skipped":
                continue
            failed = a.get("outcome") == "error"
            ev = evidence.Evidence(evidence.FAILED if failed else evidence.UNKNOWN, "the buffer's exit status only")
            out.append(Command(a["summary"], ev, error_line("", a.get("exit") or "?") if failed else None))
        elif a.get("tool") in ("Edit", "Write", "MultiEdit", "NotebookEdit") and isinstance(a.get("file"), str):
            out.append(Command("", True, edit=one_line(redact(a["file"].rsplit("/", 1)[-1]), 60)))
    return out


# ---------------------------------------------------------------- the playbook's verbs

_SUB_CLASS = (  # a tool's subcommand / target / script name -> the playbook class
    (re.compile(r"^(test|tests|check-test|nextest|spec|e2e|unit)([:_-].*)?$|^test"), "test"),
    (re.compile(r"^(lint|fmt|format|typecheck|type-check|types|clippy|vet|check)([:_-].*)?$"), "lint"),
    (re.compile(r"^(build|compile|package|dist|bundle|all|install-local|generate|gen|codegen)([:_-].*)?$"), "build"),
    (re.compile(r"^(start|dev|serve|server|run|runserver|preview|up|watch)([:_-].*)?$"), "run"),
    (re.compile(r"^(install|i|ci|sync|setup|bootstrap|migrate|restore)$"), "setup"),
)
_SCRIPT_CLASS = (
    (re.compile(r"^tests?([_-]|$)|[_-]tests?$|^run[_-]tests?|[_-]spec$"), "test"),
    (re.compile(r"^(lint|typecheck|format)([_-]|$)"), "lint"),
    (re.compile(r"^(build|compile|make)([_-]|$)"), "build"),
    (re.compile(r"^(setup|install|bootstrap)([_-]|$)"), "setup"),
    (re.compile(r"^(run|start|serve|server|dev)([_-]|$)"), "run"),
)
TEST_TOOLS = frozenset(["pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "bats", "ava", "karma", "playwright", "cypress", "unittest", "nose2", "ward"])
LINT_TOOLS = frozenset(["ruff", "flake8", "pylint", "mypy", "pyright", "eslint", "prettier", "shellcheck", "golangci-lint", "rubocop", "black", "isort", "stylelint", "biome", "hadolint", "markdownlint", "pyflakes", "bandit"])
BUILD_TOOLS = frozenset(["cmake", "ninja", "gcc", "g++", "clang", "clang++", "webpack", "rollup", "esbuild", "meson", "bazel"])
SUB_TOOLS = frozenset(["npm", "pnpm", "yarn", "bun", "cargo", "go", "nix", "make", "just", "task", "mvn", "mvnw", "gradle", "gradlew", "dotnet", "deno", "mix", "docker", "docker-compose", "poetry", "uv", "pip", "pip3", "pipenv", "pdm", "bundle", "rake", "swift", "zig"])


def _by_name(name: str) -> str | None:
    for rx, cls in _SUB_CLASS:
        if rx.match(name):
            return cls
    return None


def classify(seg: list[str]) -> str | None:  # noqa: C901 - one table walk per tool family
    """test / build / lint / run / setup for a project command, else None."""
    prog = _prog(seg)
    pos = _positional(seg)
    if prog in RUNNERS or (pos and pos[0] in RUN_SUB and prog in SUB_TOOLS and len(seg) > 2):
        rest = seg[1:] if prog in RUNNERS else seg[seg.index(pos[0]) + 1:]
        inner = classify(rest)
        return inner if inner or prog not in ("npm", "pnpm", "yarn", "bun") else _by_name(rest[0])
    if prog in TEST_TOOLS:
        return "test"
    if prog in LINT_TOOLS or (prog == "tsc" and "--noEmit" in seg):
        return "lint"
    if prog in BUILD_TOOLS or prog == "tsc":
        return "build"
    if prog in INTERPRETERS or prog.startswith("python"):
        if "-m" in seg[1:] and seg.index("-m") + 1 < len(seg):
            return classify(seg[seg.index("-m") + 1:]) or "run"
        script = pos[0].rsplit("/", 1)[-1] if pos else ""
        if script == "manage.py" and len(pos) > 1:
            return _by_name(pos[1])
        return _script_class(script) if script else None
    if prog == "nix" and pos[:2] == ["flake", "check"]:
        return "test"
    if prog in SUB_TOOLS:
        if prog in ("make", "just", "task") and not pos:
            return "build"
        return _by_name(pos[0]) if pos and pos[0] != "clean" else None
    if "/" in seg[0]:  # a script: the project's own (a relative path), not a tool installed elsewhere
        return None if seg[0].startswith(("/", "~", "$")) else _script_class(prog)
    return None


def _script_class(name: str) -> str | None:
    """A script by its name: ``test-x.py``/``run_tests.sh`` test, ``lint.sh`` lint, ``build_x.sh``
    build, ``setup.sh`` setup, ``run.sh``/``start.sh``/``serve.py`` run; any other script is a one-off
    of its session, not the project's way to do something (None)."""
    stem = re.sub(r"\.\w+$", "", name).lower()
    for rx, cls in _SCRIPT_CLASS:
        if rx.search(stem):
            return cls
    return None

