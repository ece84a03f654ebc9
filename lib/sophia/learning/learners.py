"""Learning that costs no tokens: lessons read from a session's own commands. Standard library only.

Three learners, run on one session at a time (SessionEnd's detached slow path, ``s3 backfill``):

- **error -> fix**: a command that fails, then a variant of it (same command key) that succeeds later
  in the same session, becomes a procedure: "when `X` fails with `E`, `Y` worked" (with the state
  changing commands and file edits in between as its steps). A heartbeat (``ls``, ``git status``...)
  or inline code (``python -c``) never makes a pair; a call the user rejected is neither a failure
  nor a success.
- **the project playbook**: the build, test, lint, run and setup commands (classified by verb:
  ``pytest``, ``npm test``, ``cargo test``, ``go test``, ``make test`` -> test...) that succeeded in at
  least ``PLAYBOOK_SESSIONS`` sessions of the project become procedures of category ``playbook``.
- **recurring failures**: the same command key failing with the same error class in at least
  ``GAP_SESSIONS`` sessions of a project becomes a knowledge gap of the self-model (the way reflection
  adds them).

Input: the transcript (full commands and error texts, read here and never stored whole) or, when
there is none, the action buffer's lines (the first 3 whitelisted words of a command and its exit
code). What is stored is redacted and one short line. The cross-session counts live in
``learning/commands.json`` (sets of session ids: learning the same session twice adds nothing);
procedures go to ``memory/procedures.json`` (content ids, indexed: ``s3 recall`` finds them) and
:func:`session_lines` gives SessionStart the project's playbook and fixes within a character cap.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from ..atomic import read_json, write_json_atomic
from ..errors import SophiaError
from ..kinds import one_line
from ..locking import locked

TYPE_CHECKING = False  # SessionStart imports this module for session_lines: no typing, no redact there
if TYPE_CHECKING:
    from typing import Any

PLAYBOOK_SESSIONS = 2  # a command must succeed in this many sessions of a project
GAP_SESSIONS = 2  # the same failure in this many sessions becomes a knowledge gap
MIN_COMMANDS = 2  # a session with fewer non-heartbeat commands teaches nothing
FIX_WINDOW = 12  # a fix must come within this many commands of its failure
MAX_STEPS = 3  # intervening steps kept in a fix
CMD_CHARS = 120
ERR_CHARS = 100
KEEP_SESSIONS = 20  # session ids kept per counted command
KEEP_ENTRIES = 300  # counted commands / failures kept per project
CLASS_ORDER = ("test", "build", "lint", "run", "setup")

# Read-only inspection: never a lesson, never a step (first word, or "git <sub>").
HEARTBEATS = frozenset(
    ["ls", "ll", "pwd", "cat", "echo", "printf", "head", "tail", "wc", "grep", "egrep", "rg", "ag", "find", "fd", "which", "type", "whoami", "date", "sleep", "true", "false", "env", "printenv", "readlink", "realpath", "stat", "file", "du", "df", "tree", "less", "more", "ps", "id", "uname", "hostname", "test", "[", "clear", "history", "jq", "sort", "uniq", "cut", "awk", "diff", "cmp", "basename", "dirname", "lsof", "top", "free", "uptime", "nproc"])
GIT_READ = frozenset(["status", "diff", "log", "show", "branch", "remote", "rev-parse", "ls-files", "describe", "blame", "shortlog", "reflog"])
PREP = frozenset(["cd", "pushd", "popd", "export", "source", ".", "set", "unset", "alias"])
WRAPPERS = frozenset(["sudo", "nohup", "time", "exec", "command", "nice", "stdbuf"])
INTERPRETERS = frozenset(["python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node"])
RUNNERS = {"npx": 1, "pnpx": 1, "bunx": 1, "uvx": 1}  # the tool named next is the command
RUN_SUB = frozenset(["run", "exec"])  # uv run X, poetry run X, bundle exec X, pnpm exec X
REDIRECTS = frozenset({">", ">>", ">&", "<", "&>", "&>>", "<<", "<<<", ">|"})
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
_REJECTED = re.compile(r"^(the user doesn't want to|\[request interrupted|user rejected|the tool use was rejected)",
                       re.I)
_ERRLINE = re.compile(r"error|fail|not found|no such|denied|cannot|can't|invalid|refused|timed out|"
                      r"exception|fatal|unable|missing|not a |undefined|unknown|abort", re.I)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DECOR = re.compile(r"^[\W_]*$")
_SUBST = re.compile(r"\$\([^()]*\)")


# ---------------------------------------------------------------- commands: parse and normalise


def redact(text: str) -> str:
    from ..redact import redact as _redact  # ~9 ms to import: only where a command is read

    return _redact(text)


def _tokens(cmd: str) -> list[str]:
    try:
        cmd = _SUBST.sub("$CMD", cmd.replace("\\\n", " "))
        lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        return list(lex)
    except ValueError:  # unbalanced quotes, a heredoc: the plain words
        return cmd.split()


def _segments(cmd: str) -> list[list[str]]:
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
    if prog == "git" and (not pos or pos[0] in GIT_READ):
        return True
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
    return f"{prog} {pos[0]}" if pos and _word(pos[0]) else prog


class Command:
    """One shell command of a session: its main segment, key, outcome and error line."""

    __slots__ = ("raw", "segs", "main", "key", "ok", "error", "chain", "edit")

    def __init__(self, raw: str, ok: bool, error: str | None = None, chain: str = "main", edit: str | None = None):
        self.raw, self.ok, self.error, self.chain, self.edit = raw, ok, error, chain, edit
        self.segs = [] if edit else _segments(raw)
        self.main = _main_segment(self.segs)
        self.key = command_key(self.main) if self.main and not _inline(self.main) else None

    @property
    def heartbeat(self) -> bool:
        return self.edit is None and (self.key is None or all(is_heartbeat(s) for s in self.segs))

    def display(self, project: str | None = None, *, whole: bool = True) -> str:
        """The command on one short redacted line: its working directory (relative when inside the
        project), then its segments (``whole``) or its main one, without heartbeats and plumbing."""
        if self.edit:
            return f"edit {self.edit}"
        parts, where = [], _where(self.segs, project)
        for s in self.segs if whole else [self.main]:
            if _prog(s) in PREP or (is_heartbeat(s) and s is not self.main):
                continue
            parts.append(" ".join(shlex.quote(w) if re.search(r"\s", w) else w for w in s))
        text = " && ".join(parts) or self.raw
        return one_line(redact(f"cd {where} && {text}" if where else text), CMD_CHARS)


def _main_segment(segs: list[list[str]]) -> list[str]:
    """The command a chain is run for: the last one that is neither a heartbeat nor preparation."""
    useful = [s for s in segs if not is_heartbeat(s)]
    doers = [s for s in useful if _prog(s) not in ("mkdir", "chmod", "touch", "rm", "mv", "cp", "ln")]
    pick = doers or useful or [s for s in segs if _prog(s) not in PREP]
    return pick[-1] if pick else []


def _where(segs: list[list[str]], project: str | None) -> str | None:
    """The directory a ``cd`` in the chain moves to, relative when inside the project (None: none,
    or the project root)."""
    cds = [s[1] for s in segs if _prog(s) == "cd" and len(s) > 1]
    if not cds:
        return None
    if not project:
        return cds[-1]
    d = cds[-1].rstrip("/")
    root = project.rstrip("/")
    if d == root:
        return None
    return d[len(root) + 1:] if d.startswith(root + "/") else d


def error_line(text: Any, exit_code: Any = None) -> str:
    """The most telling line of an error output, redacted, on one line."""
    lines = [ln.strip() for ln in _ANSI.sub("", str(text or "")).splitlines()]
    lines = [ln for ln in lines if ln and not _DECOR.match(ln) and not re.match(r"^exit code \d+$", ln, re.I)]
    tb = [ln for ln in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln)]
    hits = tb[-1:] or [ln for ln in lines if _ERRLINE.search(ln)][:1] or lines[:1]
    if hits:
        return one_line(redact(hits[0]), ERR_CHARS)
    return f"exit {exit_code}" if exit_code not in (None, "", 0) else "an error"


def error_class(error: str) -> str:
    """An error with its particulars masked (paths, quoted names, numbers): what recurs."""
    e = error.lower()
    e = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "Q", e)
    e = re.sub(r"(~|\.{0,2})/[^\s:]*", "P", e)
    e = re.sub(r"\b0x[0-9a-f]+\b|\d+", "N", e)
    return " ".join(e.split())[:60]


# ---------------------------------------------------------------- the session's commands


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return str(content or "")


class _Reader:
    """Pairs each Bash call of a transcript with its result; file edits are kept as steps."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[int, str, str]] = {}
        self.slots: list[Command | None] = []
        self.cwd: str | None = None

    def line(self, obj: dict[str, Any]) -> None:
        if self.cwd is None and isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
        msg = obj.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            return
        chain = "side" if obj.get("isSidechain") is True else "main"
        for b in content:
            if isinstance(b, dict):
                self.block(b, chain)

    def block(self, b: dict[str, Any], chain: str) -> None:
        raw = b.get("input")
        inp: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if b.get("type") == "tool_use" and b.get("name") == "Bash" and isinstance(inp.get("command"), str):
            self.pending[str(b.get("id"))] = (len(self.slots), inp["command"], chain)
            self.slots.append(None)
        elif b.get("type") == "tool_use" and b.get("name") in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
            f = inp.get("file_path") or inp.get("notebook_path")
            if isinstance(f, str) and f:
                self.slots.append(Command("", True, chain=chain, edit=one_line(redact(f.rsplit("/", 1)[-1]), 60)))
        elif b.get("type") == "tool_result" and str(b.get("tool_use_id")) in self.pending:
            slot, cmd, ch = self.pending.pop(str(b.get("tool_use_id")))
            text = _result_text(b.get("content"))
            if _REJECTED.match(text.strip()[:80]):
                return
            failed = b.get("is_error") is True
            self.slots[slot] = Command(cmd, not failed, error_line(text) if failed else None, ch)


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
            if r.cwd is not None and b'"tool_' not in raw:
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and obj.get("type") in ("user", "assistant"):
                r.line(obj)
    return [c for c in r.slots if c is not None], r.cwd


def commands_from_actions(actions: list[dict[str, Any]]) -> list[Command]:
    """The action buffer's Bash lines (first 3 whitelisted words, outcome, exit code) and file edits."""
    out: list[Command] = []
    for a in actions:
        if not isinstance(a, dict):
            continue
        if a.get("tool") == "Bash" and isinstance(a.get("summary"), str) and a["summary"].strip():
            if "[interrupted]" in a["summary"]:
                continue
            ok = a.get("outcome") != "error"
            out.append(Command(a["summary"], ok, None if ok else error_line("", a.get("exit") or "?")))
        elif a.get("tool") in ("Edit", "Write", "MultiEdit", "NotebookEdit") and isinstance(a.get("file"), str):
            out.append(Command("", True, edit=one_line(redact(a["file"].rsplit("/", 1)[-1]), 60)))
    return out


# ---------------------------------------------------------------- the playbook's verbs

_SUB_CLASS = (  # a tool's subcommand / target / script name -> the playbook class
    (re.compile(r"^(test|tests|check-test|nextest|spec|e2e|unit)([:_-].*)?$|^test"), "test"),
    (re.compile(r"^(lint|fmt|format|typecheck|type-check|types|clippy|vet|check)([:_-].*)?$"), "lint"),
    (re.compile(r"^(build|compile|package|dist|bundle|all|install-local)([:_-].*)?$"), "build"),
    (re.compile(r"^(start|dev|serve|server|run|runserver|preview|up|watch)([:_-].*)?$"), "run"),
    (re.compile(r"^(install|i|ci|sync|setup|bootstrap|migrate|restore)$"), "setup"),
)
_SCRIPT_CLASS = (
    (re.compile(r"^tests?([_-]|$)|[_-]tests?$|^run[_-]tests?|[_-]spec$"), "test"),
    (re.compile(r"^(lint|typecheck|format)([_-]|$)"), "lint"),
    (re.compile(r"^(build|compile|make)([_-]|$)"), "build"),
    (re.compile(r"^(setup|install|bootstrap)([_-]|$)"), "setup"),
)
TEST_TOOLS = frozenset(["pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "bats", "ava", "karma", "playwright", "cypress", "unittest", "nose2", "ward"])
LINT_TOOLS = frozenset(["ruff", "flake8", "pylint", "mypy", "pyright", "eslint", "prettier", "shellcheck", "golangci-lint", "rubocop", "black", "isort", "stylelint", "biome", "hadolint", "markdownlint", "pyflakes", "bandit"])
BUILD_TOOLS = frozenset(["cmake", "ninja", "gcc", "g++", "clang", "clang++", "webpack", "rollup", "esbuild", "meson", "bazel"])
SUB_TOOLS = frozenset(["npm", "pnpm", "yarn", "bun", "cargo", "go", "make", "just", "task", "mvn", "mvnw", "gradle", "gradlew", "dotnet", "deno", "mix", "docker", "docker-compose", "poetry", "uv", "pip", "pip3", "pipenv", "pdm", "bundle", "rake", "swift", "zig"])


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
    if prog in SUB_TOOLS:
        if prog in ("make", "just", "task") and not pos:
            return "build"
        return _by_name(pos[0]) if pos and pos[0] != "clean" else None
    if "/" in seg[0]:  # a script: the project's own (a relative path), not a tool installed elsewhere
        return None if seg[0].startswith(("/", "~", "$")) else _script_class(prog)
    return None


def _script_class(name: str) -> str:
    """A script by its name: ``test-x.py``/``run_tests.sh`` test, ``lint.sh`` lint, ``build_x.sh``
    build, ``setup.sh`` setup, anything else run."""
    stem = re.sub(r"\.\w+$", "", name).lower()
    for rx, cls in _SCRIPT_CLASS:
        if rx.search(stem):
            return cls
    return "run"


# ---------------------------------------------------------------- one session's lessons


def _fix_entry(fail: Command, steps: list[Command], ok: Command, project: str | None) -> dict[str, Any]:
    error = fail.error or "an error"
    return {"key": fail.key, "failed": fail.display(project), "error": error, "class": error_class(error),
            "fix": ok.display(project), "steps": [s.display(project) for s in steps[-MAX_STEPS:]]}


def find_fixes(cmds: list[Command], project: str | None = None) -> list[dict[str, Any]]:
    """Each failure followed, within ``FIX_WINDOW`` commands of its chain, by a success with the same
    key that differs from it (or comes after other changes): one fix per key and error class."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    # key -> (position of the failure, the failure, the changes made since)
    pending: dict[tuple[str, str], tuple[int, Command, list[Command]]] = {}
    i = 0
    for c in cmds:
        if c.heartbeat:
            continue
        i += 1
        slot = (c.chain, c.key or "")
        if not c.ok and c.key:
            pending[slot] = (i, c, [])
            continue
        if slot in pending and c.key:
            at, fail, steps = pending.pop(slot)
            sig = (fail.key or "", error_class(fail.error or ""))
            if i - at <= FIX_WINDOW and sig not in seen and (steps or c.display(project) != fail.display(project)):
                seen.add(sig)
                out.append(_fix_entry(fail, steps, c, project))
        for other, (_, _, since) in pending.items():
            if other[0] == c.chain and other != slot:
                since.append(c)
    return out


def analyse(cmds: list[Command], project: str | None = None) -> dict[str, Any]:
    """The lessons of one session: fixes, playbook commands that succeeded, failures (by key and class)."""
    useful = [c for c in cmds if not c.heartbeat and c.edit is None]
    if len(useful) < MIN_COMMANDS:
        return {"trivial": True, "fixes": [], "playbook": [], "failures": []}
    playbook: dict[str, str] = {}
    failures: dict[tuple[str, str], dict[str, Any]] = {}
    for c in useful:
        if c.ok:
            cls = classify(c.main)
            if cls:
                playbook.setdefault(c.display(project, whole=False), cls)
        elif c.key:
            err = c.error or "an error"
            failures.setdefault((c.key, error_class(err)), {"key": c.key, "command": c.display(project),
                                                            "error": err, "class": error_class(err)})
    return {"trivial": False, "fixes": find_fixes(cmds, project),
            "playbook": [{"class": v, "command": k} for k, v in playbook.items()],
            "failures": list(failures.values())}


# ---------------------------------------------------------------- what lasts: counts, procedures, gaps


def state_path(home: Path) -> Path:
    """Cross-session counts: ``{"projects": {project: {"commands": {...}, "failures": {...}}}}``."""
    return home / "learning" / "commands.json"


def _count(table: dict[str, Any], key: str, entry: dict[str, Any], session: str) -> dict[str, Any]:
    """Add ``session`` to the sessions of ``table[key]`` (a set: counting a session twice adds nothing)."""
    rec = table.setdefault(key, dict(entry, sessions=[]))
    if session not in rec["sessions"]:
        rec["sessions"] = (rec["sessions"] + [session])[-KEEP_SESSIONS:]
    return rec


def _trim(table: dict[str, Any]) -> None:
    if len(table) > KEEP_ENTRIES:
        for k in sorted(table, key=lambda k: len(table[k]["sessions"]))[: len(table) - KEEP_ENTRIES]:
            del table[k]


def _count_session(home: Path, project: str, session: str, lessons: dict[str, Any]) -> tuple[list[dict[str, Any]],
                                                                                            list[dict[str, Any]]]:
    """Count the session's playbook commands and failures; (playbook entries now promoted, failures
    now recurring and not yet a gap)."""
    p = state_path(home)
    with locked(p, timeout=30):
        try:
            st = read_json(p, default=None)
        except SophiaError:
            st = None
        st = st if isinstance(st, dict) and isinstance(st.get("projects"), dict) else {"projects": {}}
        before = json.dumps(st, sort_keys=True)
        proj = st["projects"].setdefault(project, {"commands": {}, "failures": {}})
        promoted = [r for r in (_count(proj["commands"], e["command"], e, session) for e in lessons["playbook"])
                    if len(r["sessions"]) >= PLAYBOOK_SESSIONS]
        recurring = []
        for f in lessons["failures"]:
            rec = _count(proj["failures"], f"{f['key']}\x1f{f['class']}", f, session)
            if len(rec["sessions"]) >= GAP_SESSIONS and not rec.get("gap"):
                rec["gap"] = True
                recurring.append(rec)
        _trim(proj["commands"])
        _trim(proj["failures"])
        if json.dumps(st, sort_keys=True) != before:
            write_json_atomic(p, st)
    return promoted, recurring


def _fix_item(fix: dict[str, Any], project: str, source: str, at: str) -> dict[str, Any]:
    from ..memory.files import make_item
    from ..memory.text import content_id

    after = f" (after {'; '.join(f'`{s}`' for s in fix['steps'])})" if fix["steps"] else ""
    text = f"when `{fix['failed']}` fails with `{fix['error']}`, `{fix['fix']}` worked{after}"
    return make_item(content_id("proc_", "fix", project, fix["key"], fix["class"]), "procedure", one_line(text, 600),
                     project=project, timestamp=at, source_ids=[source],
                     meta={"name": one_line(f"fix: {fix['failed']}", 160), "category": "error_fix",
                           "procedure_steps": [*fix["steps"], fix["fix"]], "error": fix["error"],
                           "failed": fix["failed"], "sessions": 1, "learner": "zero_token"})


def _playbook_item(rec: dict[str, Any], project: str, source: str, at: str) -> dict[str, Any]:
    from ..memory.files import make_item
    from ..memory.text import content_id

    cmd, cls = rec["command"], rec["class"]
    return make_item(content_id("proc_", "playbook", project, cmd), "procedure",
                     f"project playbook ({cls}): `{cmd}`", project=project, timestamp=at, source_ids=[source],
                     meta={"name": f"playbook {cls}", "category": "playbook", "class": cls,
                           "procedure_steps": [cmd], "sessions": len(rec["sessions"]), "learner": "zero_token"})


def _store_procedures(home: Path, new: list[dict[str, Any]]) -> list[str]:
    """Add or refresh procedures in ``memory/procedures.json`` and the recall index; the ids added."""
    from ..memory import indexing
    from ..memory.files import update_items

    added, touched = [], []
    with update_items("procedures", home) as items:
        by_id = {i.get("id"): i for i in items}
        for item in new:
            old = by_id.get(item["id"])
            if old is None:
                items.append(item)
                by_id[item["id"]] = item
                added.append(item["id"])
                touched.append(item)
                continue
            sources = sorted(set(old.get("source_ids") or []) | set(item["source_ids"]))
            meta = old.setdefault("meta", {})
            sessions = max(int(meta.get("sessions") or 1), len(sources), int(item["meta"].get("sessions") or 1))
            if sources != old.get("source_ids") or sessions != meta.get("sessions"):
                old["source_ids"], meta["sessions"] = sources, sessions
                touched.append(old)
    indexing.upsert(touched, home)
    return added


def _add_gaps(home: Path, gaps: list[str]) -> list[str]:
    """The self-model's knowledge gaps, added the way reflection adds them (near-duplicates skipped)."""
    if not gaps:
        return []
    from ..memory.apply import MAX_GAPS, _add_unique, _update_self_model
    from ..timeutil import now

    def mutate(sm: Any) -> dict[str, Any]:
        sm.knowledge_gaps, added = _add_unique(list(sm.knowledge_gaps), gaps, MAX_GAPS)
        if added:
            sm.updated_at = now()
        return {"added": added}

    return list(_update_self_model(home, mutate)["added"])


def _gap_text(rec: dict[str, Any], project: str) -> str:
    name = project.rstrip("/").rsplit("/", 1)[-1] or project
    return one_line(f"recurring failure in {name}: `{rec['command']}` fails with `{rec['error']}` "
                    f"({len(rec['sessions'])} sessions)", 300)


def learn_session(home: Path, session_id: str, project: str | None, cmds: list[Command], *,
                  source_id: str | None = None, at: str | None = None) -> dict[str, Any]:
    """Learn from one session's commands: store its fixes, count its playbook commands and failures,
    promote what recurs. Idempotent: the same session twice adds nothing."""
    from ..timeutil import iso

    lessons = analyse(cmds, project)
    report: dict[str, Any] = {"session": session_id, "commands": len(cmds), "trivial": lessons["trivial"],
                              "fixes": len(lessons["fixes"]), "procedures_added": [], "gaps_added": []}
    if lessons["trivial"] or not project:
        return report
    stamp, source = at or iso(), source_id or session_id
    promoted, recurring = _count_session(home, project, session_id, lessons)
    items = [_fix_item(f, project, source, stamp) for f in lessons["fixes"]]
    items += [_playbook_item(r, project, source, stamp) for r in promoted]
    report["procedures_added"] = _store_procedures(home, items)
    report["gaps_added"] = _add_gaps(home, [_gap_text(r, project) for r in recurring])
    report["playbook"] = [r["command"] for r in promoted]
    return report


def learn_transcript(home: Path, session_id: str, transcript_path: str | Path | None, *,
                     project: str | None = None, actions: list[dict[str, Any]] | None = None,
                     source_id: str | None = None, at: str | None = None) -> dict[str, Any]:
    """The SessionEnd / backfill entry point: the transcript's commands (full text and errors), else
    the action buffer's; ``project`` defaults to the transcript's working directory."""
    cmds, cwd = commands_from_transcript(transcript_path) if transcript_path else ([], None)
    if not cmds and actions:
        cmds = commands_from_actions(actions)
    return learn_session(home, session_id, project or cwd, cmds, source_id=source_id, at=at)


# ---------------------------------------------------------------- SessionStart


def session_lines(home: Path, project: str | None, max_chars: int = 1200) -> list[str]:
    """The project's playbook (one line) then its error -> fix procedures (most sessions first), within
    ``max_chars`` characters in all. Never raises: an unreadable store gives no lines."""
    if not project:
        return []
    from .. import paths

    try:  # memory/procedures.json, read as memory.files.load_items does (without its imports)
        data = read_json(paths.memory_dir(home) / "procedures.json", default=None)
    except (SophiaError, OSError, ValueError):
        return []
    raw = data.get("items") if isinstance(data, dict) else None
    items = [i for i in raw if isinstance(i, dict) and i.get("project") == project] if isinstance(raw, list) else []
    meta = [(i, i.get("meta") or {}) for i in items]
    book = sorted((m for m in meta if m[1].get("category") == "playbook"),
                  key=lambda m: (CLASS_ORDER.index(m[1].get("class")) if m[1].get("class") in CLASS_ORDER else 9,
                                 -int(m[1].get("sessions") or 0)))
    lines: list[str] = []
    if book:
        cmds = "; ".join(f"{m.get('class')} `{(m.get('procedure_steps') or [''])[0]}`" for _, m in book[:8])
        lines.append(one_line(f"- Playbook: {cmds}", min(600, max_chars - 1)))
    fixes = sorted((i for i, m in meta if m.get("category") == "error_fix"),
                   key=lambda i: (int((i.get("meta") or {}).get("sessions") or 1), str(i.get("timestamp") or "")),
                   reverse=True)
    lines += [f"- [{i.get('id')}] {one_line(i.get('text'), 300)}" for i in fixes]
    out, used = [], 0
    for ln in lines:
        if used + len(ln) + 1 > max_chars:
            continue
        out.append(ln)
        used += len(ln) + 1
    return out
