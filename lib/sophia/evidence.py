"""Did a command do what it was run for? The one command-evidence classifier. Standard library only.

An agent's shell call reports one exit status: its last command's. Agents mask it all the time
(``make 2>&1 | tail -20`` with a linker error above the tail, ``npx eslint . || true``, a script that
prints ``❌`` lines and exits 0, ``gcc ... &`` sent to the background), and the client reports calls
that never ran (a cancelled parallel call, a permission or hook denial, the user's interrupt) as
errors. :func:`judge` reads the command's shape and its output and says one of

- ``ok``: it ran and its output shows nothing wrong (with a masked status: it shows success);
- ``failed``: it ran and did not do what it was run for (an error status, or failure markers in the
  output: error lines, "No such file", "command not found", a non-zero ``exit:`` line, a test summary
  with failures, ✗/❌);
- ``unknown``: nothing tells (a masked status and an output that shows neither; sent to the background);
- ``cancelled`` / ``denied`` / ``interrupted``: it never ran, or was stopped: neither a success nor a
  failure of the command.

Every learner, the episode's outcome and the condensed digest input ask this module, so they agree.
A command's :func:`shape` (which masks it has, whether it is backgrounded or only reads) holds no
word of the command beyond program names, so it can be kept on disk where the command cannot.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OK, FAILED, UNKNOWN = "ok", "failed", "unknown"
CANCELLED, DENIED, INTERRUPTED = "cancelled", "denied", "interrupted"
NOT_RUN = frozenset({CANCELLED, DENIED, INTERRUPTED})
VERDICTS = (OK, FAILED, UNKNOWN, CANCELLED, DENIED, INTERRUPTED)
PROOF_LINES = 3
PROOF_CHARS = 160
# a terminal's colour and cursor codes (CSI), titles (OSC) and charset switches: not words of the output
TERMINAL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()][A-Za-z0-9]|\x1b")


def plain(text: str) -> str:
    """``text`` without terminal escape codes (``\\x1b[0;34m`` and the like)."""
    return TERMINAL.sub("", text)


# ---------------------------------------------------------------- calls that never ran

_CANCELLED = re.compile(r"sibling tool call errored|cancell?ed:? (?:due to )?(?:a )?parallel tool call|"
                        r"tool call was cancell?ed|<tool_use_error>cancell?ed", re.I)
_DENIED = re.compile(
    r"^(?:error: )?(?:the user doesn't want to (?:proceed|take this action)|user rejected tool use|"
    r"the tool use was rejected|permission to use \S+ (?:with command .{0,400})?has been denied|"
    r"claude requested permissions? to use|this command requires approval|"
    r"(?:pre ?tool ?use|pretooluse)(?::\S+)? hook (?:error|blocked|denied)|"
    r"blocked by (?:a |the )?(?:\S+ )?hook|hook denied|operation blocked by hook)", re.I | re.S)
_INTERRUPTED = re.compile(r"^(?:error: )?(?:\[request interrupted by user|interrupted by user)", re.I)
_TIMED_OUT = re.compile(r"^(?:error: )?command timed out after", re.I)
_EXIT_HEAD = re.compile(r"^(?:Error: )?Exit code (\d{1,3})\b")
_BACKGROUND = re.compile(r"^Command (?:running in background|was manually backgrounded)", re.I)


def not_run(text: str, interrupted: bool = False) -> str | None:
    """``cancelled``, ``denied`` or ``interrupted`` when the client's answer says the call never ran
    or was stopped (for any tool), else None."""
    head = (text or "").lstrip()[:600]
    head = head.removeprefix("<tool_use_error>").lstrip()
    if interrupted or _INTERRUPTED.match(head):
        return INTERRUPTED
    if _CANCELLED.search(head[:200]):
        return CANCELLED
    if _DENIED.match(head):
        return DENIED
    return None


def exit_code(text: str) -> int | None:
    """The exit status Claude Code puts first in a failed Bash result ("Exit code 2"), or None."""
    m = _EXIT_HEAD.match((text or "").lstrip())
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- what a command's status can hide

READERS = frozenset(["cat", "grep", "egrep", "fgrep", "rg", "ag", "ls", "ll", "find", "fd", "head", "tail", "less",
                     "more", "wc", "jq", "yq", "tree", "echo", "printf", "stat", "file", "du", "df", "diff",
                     "awk", "sed", "sort", "uniq", "cut", "ps", "which", "type", "pwd", "env", "printenv",
                     "readlink", "realpath", "history", "journalctl", "dmesg", "lsof", "column", "nl", "tac",
                     "xxd", "od", "strings", "basename", "dirname", "date", "whoami", "id", "uname", "sleep", "true",
                     "test", "["])
# checkers that print nothing when all is well: an empty output under a mask is their success
SILENT_CHECKERS = frozenset(["tsc", "eslint", "ruff", "flake8", "shellcheck", "gofmt", "hadolint", "pyflakes"])
# git's subcommands that only look, whatever follows them; the ones that look or change by what follows
# (config, branch, tag, remote, stash) are told apart by git_reads
GIT_READERS = frozenset(["status", "log", "show", "diff", "rev-parse", "ls-files", "blame", "describe", "shortlog",
                         "reflog", "grep", "ls-tree", "ls-remote", "cat-file", "rev-list", "show-ref", "for-each-ref",
                         "merge-base", "name-rev", "check-ignore", "count-objects", "whatchanged", "cherry", "version",
                         "help", "var"])
_GIT_VALUED = frozenset(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"])
_GIT_CONFIG_LOOKS = frozenset(["-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                               "--get-colorbool"])
_GIT_CONFIG_SCOPES = frozenset(["--global", "--local", "--system", "--worktree", "--show-origin", "--show-scope",
                                "--includes", "--null", "-z", "--name-only", "--bool", "--int", "--path"])
_GIT_LIST_FLAGS = frozenset(["-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--contains",
                             "--merged", "--no-merged", "--points-at", "--show-current", "-n", "--sort", "--format"])
_WRAPPERS = frozenset(["sudo", "nohup", "time", "exec", "command", "nice", "stdbuf", "env", "timeout", "xargs"])
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1.*?^\s*\2\s*$", re.S | re.M)
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
_OPS = re.compile(r"\|\||&&|\|&|[|;&\n]")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIR_AMP = re.compile(r"\d*>&\d*-?|&>>?")
_MATCHERS = frozenset(["grep", "egrep", "fgrep", "rg", "ag"])  # exit 1: nothing matched, not an error
_RUNNERS = frozenset(["npx", "pnpx", "bunx", "uvx"])
# programs whose job is to print: exit 0 with nothing printed does not show they did their work
_EXPECT_OUTPUT = frozenset(["python", "python3", "node", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node"])
# programs that always print: nothing printed means the shell may not have run the command at all
_ALWAYS_PRINT = frozenset(["echo", "printf", "pwd", "wc", "date", "whoami", "uname", "ping", "id", "hostname", "nproc"])
_CLIENT_NOTES = re.compile(r"^(?:\(Bash completed with no output\)|Shell cwd was reset to .*|<persisted-output>|"
                           r"\[rerun: \w+\])$")
_PREP = frozenset(["cd", "pushd", "popd", "export", "set", "source", ".", "unset", "alias", "mkdir", "echo", "printf"])


def _programs(segment: str) -> list[str]:
    """The program of a simple command and, for ``git``, its arguments (wrappers and assignments skipped)."""
    words = [w for w in segment.split() if not w.startswith(("<", ">")) and not re.match(r"^\d*[<>]", w)]
    i = 0
    while i < len(words) and (_ASSIGN.match(words[i]) or words[i] in _WRAPPERS or words[i].startswith("-")
                              or (i and words[i - 1] == "timeout" and re.match(r"^\d", words[i]))):
        i += 1
    if i >= len(words):
        return []
    prog = words[i].strip("()").rsplit("/", 1)[-1]
    rest = [w for w in words[i + 1:] if not w.startswith("-")]
    if prog in _RUNNERS and rest:  # npx tsc: the tool is tsc
        return _programs(" ".join(rest))
    return [prog, *words[i + 1:]] if prog == "git" and rest else [prog]


def git_reads(args: list[str]) -> bool:
    """Whether ``git ARGS`` only looks: a subcommand of ``GIT_READERS``; ``config`` getting or listing (a
    key alone, or ``--get``/``--list``), ``branch``/``tag`` listing (no name, or a listing flag), ``remote``
    with no name or ``show``/``get-url``, ``stash list``/``show``. ``git config --unset``, ``git branch -D x``,
    ``git tag v1``, ``git remote add``: they change the repository."""
    i = 0
    while i < len(args) and args[i].startswith("-"):  # git's own options (-C DIR, -c KEY=VALUE, --no-pager)
        i += 2 if args[i] in _GIT_VALUED else 1
    if i >= len(args):
        return True
    sub, after = args[i], args[i + 1:]
    rest = [a for a in after if not a.startswith("-")]
    flags = {a.split("=", 1)[0] for a in after if a.startswith("-")}
    if sub == "config":
        return bool(flags & _GIT_CONFIG_LOOKS) or (len(rest) <= 1 and flags <= _GIT_CONFIG_SCOPES)
    if sub in ("branch", "tag"):
        return flags <= _GIT_LIST_FLAGS and (not rest or bool(flags & {"-l", "--list", "--contains", "--points-at"}))
    if sub == "remote":
        return not rest or rest[0] in ("show", "get-url")
    if sub == "stash":
        return bool(rest) and rest[0] in ("list", "show")
    return sub in GIT_READERS


def _is_reader(progs: list[str]) -> bool:
    if not progs:
        return True
    if progs[0] == "git":
        return git_reads(progs[1:])
    return progs[0] in READERS


def shape(command: str, *, background: bool = False) -> dict[str, Any]:
    """What a command's exit status can be trusted for, in program names and flags only:
    ``mask`` (what hides the intended command's status: ``| tail``, ``|| true``, ``;``, ``&``,
    ``set +e``), ``bg`` (sent to the background), ``reader`` (every part only reads: its output is
    content, not diagnostics), ``progs`` (the programs it runs, for matching ``prog: error`` lines)."""
    text = _QUOTED.sub("''", _HEREDOC.sub(" ", command or "").replace("\\\n", " "))
    to_file = bool(re.search(r"(?:^|[^0-9>&])>{1,2}(?!&)|&>|\btee\b", text))
    text = _REDIR_AMP.sub(" > ", text).strip()
    bg = background or bool(re.search(r"(?<![&|])&\s*$", text))
    parts, ops = _OPS.split(text), _OPS.findall(text)
    segs = [_programs(p) for p in parts]
    out: dict[str, Any] = {"mask": None, "bg": bg, "to_file": to_file, "last": next((s[0] for s in reversed(segs) if s), ""), "reader": all(_is_reader(s) for s in segs if s),
                           "progs": list(dict.fromkeys(s[0] for s in segs if s))[:8]}
    pipefail = bool(re.search(r"\bset\s+-[a-z]*o\s*pipefail\b|\bset\s+-o\s+pipefail\b", text))
    for i, op in enumerate(ops):
        left, right = segs[i], (segs[i + 1] if i + 1 < len(segs) else [])
        if not right or not left or _is_reader(left) or left[0] in _PREP:
            continue
        if (op in ("|", "|&") and not pipefail) or op in ("||", ";", "\n", "&"):
            out["mask"] = f"| {right[0]}" if op in ("|", "|&") else op.replace("\n", ";")
            break
    if out["mask"] is None and re.search(r"(?:^|[;&|\s])set\s+\+e\b", text):
        out["mask"] = "set +e"
    out["status_echo"] = _status_echo(command or "", segs, ops, pipefail)
    return out


def _status_echo(command: str, segs: list[list[str]], ops: list[str], pipefail: bool) -> bool:
    """The command ends by printing ``$?`` (``...; echo "EXIT: $?"``) and that status is the intended
    command's: the one before the echo is no pipe's tail (without pipefail) and no mask, or is ``wait``
    for a job sent to the background."""
    if not re.search(r"(?:^|[;\n&|]\s*)(?:echo|printf)\b[^;\n|&]*\$\?[^;\n|&]*$", command.strip()):
        return False
    if len(segs) < 2 or not segs[-1] or segs[-1][0] not in ("echo", "printf") or ops[-1] not in (";", "\n"):
        return False
    before = segs[-2]
    if before and before[0] == "wait":
        return True
    if not before or _is_reader(before) or before[0] in _PREP:
        return False
    return len(ops) < 2 or ops[-2] not in ("|", "|&", "||") or pipefail


# ---------------------------------------------------------------- what an output says

_FAILURE_LINES = [re.compile(p, re.I if i > 0 else 0) for i, p in enumerate([
    r"❌|✗|✘|\bFAIL(?:ED)?\b(?!\s*=\s*0)",  # case-sensitive: FAIL / FAILED, marks
    r"command not found|not recognized as (?:an internal|the name of a cmdlet)",
    r"no such file or directory|cannot access|cannot find (?:the )?(?:path|module|file)",
    r"^traceback \(most recent call last\)|^\w*(?:error|exception):\s|^e\s+\w+(?:error|exception)\b",
    r"^(?:npm|pnpm|yarn) (?:err!|error)|^error(?:\[\w+\])?(?::|\s-)|^fatal:|^\S+: error:|^\S+:\d+:\d+: error\b",
    r"^make(?:\[\d+\])?: \*\*\*|undefined reference to|ld returned \d+ exit status|collect2: error|"
    r"\(\d+,\d+\): error\b|: error [A-Z]{2,4}\d+:",
    r"externally-managed-environment|this environment is externally managed|if you believe this is a mistake, please "
    r"contact your python installation|permission denied|eacces|segmentation fault|core dumped",
    r"\b[1-9]\d* (?:failed|failing|failures?|errors?)\b(?! (?:were|was) (?:fixed|resolved))",
    r"^tests?:.*\b[1-9]\d* failed|test result: failed|^not ok \d+|^fail(?:ed)?\s+\S|build failed|"
    r"compilation failed|failed to compile|^fatal error|^error: could not compile",
    r"\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit code|returned)[:= ]+(?!0\b)[1-9]\d*\b",
])]
_NEGATED = re.compile(r"\b(?:no|0|zero|without)\s+(?:\w+\s+)?(?:errors?|failures?|failed|issues?|problems?)\b|"
                      r"\b(?:fail(?:ed|ures?)?|errors?)\s*[:=]\s*0\b", re.I)
_SUCCESS_LINES = re.compile(
    r"\b[1-9]\d* (?:passed|passing|tests? passed)\b|^tests?:\s+\d+ passed|test result: ok\b|^ok\s+\S|^OK(?: \(|$)|"
    r"successfully (?:installed|built|compiled|created|tagged|deployed|updated|pushed|uploaded)|"
    r"build successful|compiled successfully|\bbuilt in \d|finished (?:`?\w+`? )?(?:profile|release|dev)\b|"
    r"all (?:checks|tests) passed|found 0 errors|0 errors|✓|✔|✅|done in \d|^to \S+\s*$|\d+ files? changed|"
    r"\b(?:added|installed|removed|changed|audited) \d+ packages?\b|^\s*\+ [\w.-]+==\S+|already up.to.date|"
    r"^up to date\b|requirement already satisfied|prerendered as static content|^route \((?:app|pages)\)",
    re.I | re.M)
# a warning that something the command needed is absent, or that part of its work was left undone
_DOUBT = re.compile(r"(?:⚠|\bwarn(?:ing)?\b).*(?:\bnot found\b|\bmissing\b|\bno such\b|\bdoes(?: not|n't) exist\b|"
                    r"\bmanual(?:ly)?\b|\bnot (?:created|installed|configured|set up|applied|linked|copied)\b)",
                    re.I)
_WARNING = re.compile(r"⚠|\bwarn(?:ing)?\b|\bcould(?: not|n't)\b|\bunable to\b", re.I)
# a line printing an echoed ``$?``: "EXIT: 0", "exit code 0", "rc=0"
_STATUS_ZERO = re.compile(r"^\W*(?:exit(?:[ _]?(?:code|status))?|status|rc|ret(?:urn)?(?: code)?)\s*[:=]?\s*0\W*$", re.I)
_LINE_CAP = 400


def _lines(text: str) -> list[str]:
    out = [ln.strip() for ln in plain(text or "").splitlines()]
    return [ln for ln in out if ln and not _CLIENT_NOTES.match(ln)]


def _failure_lines(lines: list[str], reader: bool, progs: list[str]) -> list[str]:
    """Lines that say the command failed. For a command that only reads (its output is content), only
    a program's own diagnostics count (``grep: x: No such file``, ``bash: y: command not found``)."""
    own = tuple(f"{p}:" for p in [*progs, "bash", "sh", "zsh", "/bin/bash", "/bin/sh"])
    hits = []
    for ln in lines:
        ln = ln[:_LINE_CAP]
        if reader and not ln.startswith(own):
            continue
        if _NEGATED.search(ln) and not re.search(r"[1-9]\d* (?:failed|errors?)", ln):
            continue
        if any(rx.search(ln) for rx in _FAILURE_LINES):
            hits.append(ln)
    return hits


def _proof(lines: list[str]) -> list[str]:
    return [ln[:PROOF_CHARS] for ln in lines[:PROOF_LINES]]


class Evidence:
    """A call's verdict (one of :data:`VERDICTS`), why in a few words, and the output lines that prove it;
    ``doubt``: for an ``ok``, a line that casts doubt on it (a warning that something it needed was not
    found): enough for an ok, not enough to prove a fix."""

    __slots__ = ("verdict", "reason", "proof", "exit", "doubt", "warnings")

    def __init__(self, verdict: str, reason: str, proof: list[str] | None = None, exit: int | None = None,
                 doubt: str | None = None, warnings: list[str] | None = None) -> None:
        self.verdict, self.reason, self.proof, self.exit, self.doubt = verdict, reason, proof or [], exit, doubt
        self.warnings = warnings or []  # for an ``ok``: the warning lines it printed (a few)

    @property
    def ok(self) -> bool:
        return self.verdict == OK

    @property
    def failed(self) -> bool:
        return self.verdict == FAILED

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "reason": self.reason}
        if self.proof:
            out["proof"] = self.proof
        if self.exit is not None:
            out["exit"] = self.exit
        return out

    def __repr__(self) -> str:
        return f"Evidence({self.verdict!r}, {self.reason!r})"


def judge(command: str | dict[str, Any], output: str, *, is_error: bool, interrupted: bool = False,
          background: bool = False) -> Evidence:
    """The verdict on one shell call from its command (or its :func:`shape`) and what it printed.
    ``is_error``: the client reported a non-zero status; ``interrupted``: the client says it was
    interrupted; ``background``: it was started in the background (``run_in_background``)."""
    text = output or ""
    stopped = not_run(text, interrupted)
    if stopped:
        return Evidence(stopped, {CANCELLED: "the client cancelled the call", DENIED: "refused before it ran",
                                  INTERRUPTED: "the user interrupted it"}[stopped])
    sh = command if isinstance(command, dict) else shape(command, background=background)
    lines = _lines(text)
    if is_error:
        return _judge_error(text, lines, sh)
    if sh.get("bg") or background or _BACKGROUND.match(text.lstrip()):
        return Evidence(UNKNOWN, "sent to the background: its result is not known yet")
    failures = _failure_lines(lines, bool(sh.get("reader")), list(sh.get("progs") or []))
    if failures:
        return Evidence(FAILED, "exit 0, but the output reports a failure" + (f" (status masked by {sh['mask']})"
                                                                                if sh.get("mask") else ""),
                        _proof(failures[-PROOF_LINES:] if _summary_last(failures) else failures), 0)
    ev = _judge_exit_zero(lines, sh)
    if ev.ok and not sh.get("reader"):
        ev.warnings = [ln[:PROOF_CHARS] for ln in lines if _WARNING.search(ln[:_LINE_CAP])][:PROOF_LINES]
    return ev


def _judge_exit_zero(lines: list[str], sh: dict[str, Any]) -> Evidence:
    """An exit status of 0 with no failure line: ok when nothing masks it or the output shows success."""
    doubt = None if sh.get("reader") else next((ln[:PROOF_CHARS] for ln in lines if _DOUBT.search(ln[:_LINE_CAP])), None)
    if sh.get("status_echo") and not sh.get("reader"):
        zero = [ln for ln in lines if _STATUS_ZERO.match(ln[:_LINE_CAP])] or [ln for ln in lines[-1:] if ln == "0"]
        if zero:
            return Evidence(OK, "the status it printed ($?) is 0", _proof(zero[-1:]), 0, doubt)
    if sh.get("mask") and not sh.get("reader"):
        wins = [ln for ln in lines if _SUCCESS_LINES.search(ln[:_LINE_CAP])]
        if wins:
            return Evidence(OK, f"status masked by {sh['mask']}, the output shows success", _proof(wins[-PROOF_LINES:]),
                            0, doubt)
        if not lines and sh["mask"].startswith("| ") and SILENT_CHECKERS & set(sh.get("progs") or []):
            return Evidence(OK, f"status masked by {sh['mask']}, and the checker printed nothing", [], 0)
        return Evidence(UNKNOWN, f"status masked by {sh['mask']} and the output shows neither success nor failure")
    if not lines and _ALWAYS_PRINT & set(sh.get("progs") or []) and not sh.get("mask") and not sh.get("to_file"):
        return Evidence(UNKNOWN, "nothing printed, though the command always prints: it may not have run")
    if not lines and _runs_a_script(sh):
        return Evidence(UNKNOWN, "exit 0 with no output: nothing shows the script did its work")
    return Evidence(OK, "exit 0", _proof(lines[-1:]), 0, doubt)


def _runs_a_script(sh: dict[str, Any]) -> bool:
    """An interpreter or the project's own script (``./x.sh``, ``python x.py``) is the last thing run."""
    progs = [p for p in sh.get("progs") or [] if p not in _PREP]
    last = progs[-1] if progs else ""
    return last in _EXPECT_OUTPUT or last.startswith("python") or bool(re.search(r"\.(?:sh|py|js|rb|pl)$", last))


def _summary_last(failures: list[str]) -> bool:
    """A test runner prints its summary last: prefer the last lines when one of them is a summary."""
    return bool(re.search(r"\d+ (?:failed|failing|passed)|test result", failures[-1], re.I))


def _judge_error(text: str, lines: list[str], sh: dict[str, Any]) -> Evidence:
    code = exit_code(text)
    body = lines[1:] if lines and _EXIT_HEAD.match(lines[0]) else lines
    if _TIMED_OUT.match(text.lstrip()):
        return Evidence(FAILED, "timed out", _proof(lines[:1]), code)
    if code in (1, None) and sh.get("last") in _MATCHERS and not [ln for ln in body if ln.lower() != "error"]:
        return Evidence(UNKNOWN, f"{sh['last']} matched nothing (exit 1)", [], code)
    failures = _failure_lines(body, False, list(sh.get("progs") or []))
    return Evidence(FAILED, f"exit {code}" if code is not None else "the client reported an error",
                    _proof(failures or body[-1:] or lines[:1]), code)
