"""The analyzer: walk a command line command by command and collect findings.

``analyze_tool(tool_name, tool_input, cwd, env) -> Decision`` is the entry point. For Bash it
parses the command (:mod:`.shell`), follows ``cd`` and simple ``VAR=value`` assignments, analyses
every ``$(...)``/backtick/``<(...)`` body as commands of its own, strips wrappers (:mod:`.wrappers`)
and hands each real command to the rule family that knows it (:mod:`.rules_fs`, :mod:`.rules_exec`,
:mod:`.rules_sys`, :mod:`.rules_vcs_db`). For Write/Edit/MultiEdit/NotebookEdit only the target path
is judged: the content is data.
"""

from __future__ import annotations

import itertools
import posixpath

from . import fields, rules_self, targets
from .decision import Decision, Finding, combine
from .record import field, record
from .shell import UNKNOWN, Command, Script, Word, parse, substitutions
from .targets import Ctx
from .wrappers import NET_FETCHERS, Invocation, strip

MAX_DEPTH = 8
_DECODERS = frozenset({"base64", "xxd", "basenc", "cat"})  # stages that pass text on (decoded) in a $( )
MAX_EXPANSIONS = 16

@record
class Stdin:
    """What a command reads on standard input (from earlier pipeline stages or redirections)."""

    kind: str = "none"  # none | text | net | find | ls | redis_keys | unknown
    text: str = ""
    roots: list[str] = field(default_factory=list)
    filtered: bool = False
    secret: str = ""  # what secret flows in, if any
    trusted: bool = False  # kind "net": every fetch is an official installer (rules_exec.TRUSTED_INSTALLERS)


@record
class Call:
    inv: Invocation
    cmd: Command
    script: Script
    stdin: Stdin
    depth: int
    words: list[list[str]]  # evaluated words (each may expand to several strings)

    @property
    def name(self) -> str:
        return self.inv.name

    @property
    def args(self) -> list[str]:
        return self.inv.args

    def show(self) -> str:
        text = " ".join([self.inv.argv0 or self.inv.name, *self.inv.args]).replace(UNKNOWN, "$…")
        return text if len(text) <= 100 else text[:97] + "..."


class Analyzer:
    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.findings: list[Finding] = []
        self._sub_cache: dict[str, tuple[bool, str]] = {}
        self.dirs: list[str | None] = []  # pushd's stack
        self.scripts_seen: set[tuple[str, int, str]] = set()  # script lines judged already (scripts.py)
        self.net_fds: set[str] = set()  # descriptors opened onto the network (`exec 5<>/dev/tcp/h/p`)
        self.net_dev = False  # the line names /dev/tcp or /dev/udp (a network connection bash opens)
        self.net_read = False  # ... and reads lines with `read` (what a loop may then run)
        self.aliases: dict[str, str] = {}  # `alias x='...'` earlier on the line

    # -- findings -------------------------------------------------------------------------------
    def add(self, level: str, rule: str, why: str, instead: str = "") -> None:
        self.findings.append(Finding(level, rule, why, instead))

    # -- expansion ------------------------------------------------------------------------------
    def fields(self, w: Word) -> list[list[str]]:
        """The words a command word becomes, each with its possible values: brace expansion
        (``rm -rf /tmp/{a,../home}`` is two words) and the splitting of an unquoted expansion
        (``X="-rf /"; rm $X``) make several."""
        parts = w.parts
        if len(parts) == 1 and parts[0].kind == "lit" and (parts[0].quoted or "{" not in parts[0].text):
            return [[parts[0].text]]  # a plain word (most of them)
        for p in parts:
            if p.kind == "var" and (not p.quoted or p.text == "@") or not p.quoted and (
                    p.kind == "sub" or p.kind == "lit" and "{" in p.text):
                break
        else:
            return [self.expand(w)]
        per_value = [self._tildes(fields.split(v)) if fields.OPEN in v else fields.split(v)
                     for v in self.expand(w, True)]
        width = max(len(f) for f in per_value)
        return [[f[k] for f in per_value if k < len(f)] for k in range(width)]

    def _tildes(self, words: list[str]) -> list[str]:
        """Brace expansion comes before tilde expansion: ``{~,/tmp/x}`` names the home folder."""
        return [self.ctx.home + x[1:] if x == "~" or x.startswith("~/") else x for x in words]

    def expand(self, w: Word, mark: bool = False) -> list[str]:
        """Possible values of a word; UNKNOWN marks what cannot be known (``mark``: for :meth:`fields`,
        the characters that make more words marked)."""
        choices: list[list[str]] = []
        for p in w.parts:
            if p.kind == "lit":
                choices.append([fields.mark_braces(p.text) if mark and not p.quoted else p.text])
            elif p.kind == "tilde":
                if p.text == "" or p.text == posixpath.basename(self.ctx.home):
                    choices.append([self.ctx.home])
                elif p.text in ("+",):
                    choices.append([self.ctx.cwd or UNKNOWN])
                else:
                    choices.append([posixpath.join(posixpath.dirname(self.ctx.home) or "/home", p.text)])
            elif p.kind == "var":
                vals = self._var(p.text, p.default)
                if p.text in ("@", "*") and not (mark and (p.text == "@" or not p.quoted)):
                    vals = [v.replace(fields.BLANK, " ") for v in vals]  # "$*" is one word; "$@" one per argument
                choices.append([fields.mark_blanks(v) for v in vals] if mark and not p.quoted else vals)
            elif p.kind == "sub":
                val = self.sub_value(p.text)
                choices.append([fields.mark_blanks(val) if mark and not p.quoted else val])
            elif p.kind == "proc":
                choices.append(["/dev/fd/63"])
            else:
                choices.append(["0"])
        out = []
        for combo in itertools.islice(itertools.product(*choices), MAX_EXPANSIONS):
            out.append("".join(combo))
        return out or [""]

    def _var(self, name: str, default: str | None) -> list[str]:
        ctx = self.ctx
        if name in ctx.vars:
            val = ctx.vars[name]
            return val.split("\x01") if "\x01" in val else [val]
        if name == "HOME":
            return [ctx.home]
        if name == "PWD":
            return [ctx.cwd or UNKNOWN]
        if name == "USER" or name == "LOGNAME":
            return [posixpath.basename(ctx.home)]
        if name == "TMPDIR":
            return [ctx.tmpdirs[-1] if len(ctx.tmpdirs) > 4 else "/tmp"]
        if name == "CLAUDE_PROJECT_DIR":
            return [ctx.project or UNKNOWN]
        if name in ("SHELL", "BASH", "0"):
            return ["/bin/bash"]  # the user's login shell, or the one running the line: some shell
        if default is not None:
            sub = parse("x " + default).commands
            if sub and len(sub[0].words) == 2:
                return self.expand(sub[0].words[1])
            return [default]
        return [UNKNOWN]

    def sub_value(self, text: str) -> str:
        """The output of ``$(text)`` when it is knowable (pwd, mktemp, echo ...)."""
        sc = parse(text)
        if len(sc.commands) > 1 and all(c.pipeline == sc.commands[0].pipeline for c in sc.commands) and all(
                c.words and c.words[0].literal() in _DECODERS for c in sc.commands[1:]):
            from .rules_exec import producer_info

            out = producer_info(self, sc.commands)  # `$(echo ... | base64 -d)`: what the pipeline prints
            return out.text if out.kind == "text" else UNKNOWN
        if len(sc.commands) == 2 and sc.commands[0].words and sc.commands[0].words[0].literal() == "cd":
            return self._cd_pwd(sc)
        values = {self._one_value(c) for c in sc.commands} if sc.commands else {UNKNOWN}
        return values.pop() if len(values) == 1 else UNKNOWN  # `$(mktemp -d || mktemp -d -t x)`

    def _one_value(self, cmd: Command) -> str:
        """What one command of a substitution prints, when it is knowable."""
        if not cmd.words:
            return UNKNOWN
        words = [v for w in cmd.words for v in self.expand(w)]
        inv = strip(words)
        if inv.name == "pwd":
            return self.ctx.cwd or UNKNOWN
        if inv.name == "git" and inv.args[-2:] == ["rev-parse", "--show-toplevel"] or inv.args == ["rev-parse", "--show-toplevel"]:
            return self.ctx.project or UNKNOWN
        if inv.name == "mktemp":
            if "-p" in inv.args or "--tmpdir" in " ".join(inv.args) and "=" in " ".join(inv.args):
                return UNKNOWN
            return "/tmp/tmp.guardian"
        if inv.name in ("echo", "printf", "cat"):
            return _printed(inv, cmd, self)
        if inv.name in ("dirname",) and inv.args:
            return posixpath.dirname(inv.args[-1]) or "."
        if inv.name == "realpath" and inv.args:
            return targets.resolve(self.ctx, inv.args[-1]) or UNKNOWN
        if inv.name == "find":
            return self._found(inv.args)
        return UNKNOWN

    def _found(self, args: list[str]) -> str:
        """``$(find ROOT ...)`` prints paths under ROOT: stands for one of them (a name no glob matches)."""
        from .rules_fs import find_roots

        roots, _expr = find_roots(args)
        root = targets.resolve(self.ctx, roots[0]) if len(roots) == 1 else None
        return posixpath.join(root, "(a path find lists)") if root and UNKNOWN not in root else UNKNOWN

    def _cd_pwd(self, sc: Script) -> str:
        """``$(cd "$(dirname "$0")" && pwd)``, the way scripts find their own folder: the folder cd goes to."""
        (cd, pwd) = ([v for w in c.words for v in self.expand(w)[:1]] for c in sc.commands)
        if cd[:1] != ["cd"] or pwd[:1] != ["pwd"] or len(cd) < 2 or cd[-1].startswith("-") and cd[-1] != "-":
            return UNKNOWN
        return targets.resolve(self.ctx, cd[-1]) or UNKNOWN

    # -- substitution facts ---------------------------------------------------------------------
    def sub_info(self, text: str) -> tuple[bool, str]:
        """(fetches code from the network, other than an official installer; secret it reads) for a
        substitution body."""
        if text in self._sub_cache:
            return self._sub_cache[text]
        from .rules_exec import reads_secret, trusted_fetch

        fetch = False
        secret = ""
        for cmd in parse(text).commands:
            words = [v for w in cmd.words for v in self.expand(w)]
            inv = strip(words)
            if inv.name in NET_FETCHERS and not trusted_fetch(inv):
                fetch = True
            s = reads_secret(self, inv, cmd)
            secret = secret or s
        self._sub_cache[text] = (fetch, secret)
        return fetch, secret

    # -- walking --------------------------------------------------------------------------------
    def script(self, text: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            self.add("ask", "nesting", "the command nests shells too deeply to judge",
                     "Run the inner commands directly so they can be checked.")
            return
        if UNKNOWN in text:
            text = text.replace(UNKNOWN, "$UNKNOWN_")
        if not self.net_dev and ("/dev/tcp/" in text or "/dev/udp/" in text or "ztcp " in text):
            self.net_dev = True
            self.net_read = any(w in text for w in ("read ", "read\t", "read -"))
        sc = parse(text)
        from .rules_sys import fork_bombs

        fork_bombs(self, sc)
        scopes: list[tuple[int, str | None, dict[str, str]]] = []
        for cmd in sc.commands:
            self._scope(cmd.subshells, scopes)
            self.command(cmd, sc, depth)
        self._scope((), scopes)

    def _scope(self, subshells: tuple[int, ...], scopes: list[tuple[int, str | None, dict[str, str]]]) -> None:
        """Enter and leave ``( )`` subshells: a ``cd`` or a variable set inside one does not outlive it."""
        while scopes and scopes[-1][0] not in subshells:
            _id, self.ctx.cwd, self.ctx.vars = scopes.pop()
        opened = {sid for sid, _c, _v in scopes}
        for sid in subshells:
            if sid not in opened:
                scopes.append((sid, self.ctx.cwd, dict(self.ctx.vars)))

    def command(self, cmd: Command, sc: Script, depth: int) -> None:
        self._substitutions(cmd, depth)
        words = [f for w in cmd.words for f in self.fields(w)]
        if not cmd.words:
            self._assignments(cmd, sc, depth)
            return
        if self._runs_nothing(cmd, words):
            return
        from . import hidden
        from .dispatch import dispatch

        for name, w in cmd.assigns:
            hidden.program_var(self, name, self.expand(w)[0], depth)
        stdin = self._stdin(cmd, sc)
        for flat in _iterations(words):
            inv = strip(flat)
            if inv.lookup_only:
                return
            call = Call(inv, cmd, sc, stdin, depth, words)
            self._redirs(cmd, call, depth, sc)
            if self._shell_state(inv):
                return
            if inv.name in self.aliases and not inv.wrappers:
                hidden.run_alias(self, inv, depth)
                continue
            saved = self.ctx.cwd
            if "env" in inv.wrappers:  # env NAME=value ... / env -C DIR: what the command it runs sees
                self.ctx.cwd = hidden.env_wrapper(self, flat, depth)
            for run in hidden.xargs_runs(inv, stdin) if inv.via_xargs else [inv]:
                dispatch(self, call if run is inv else Call(run, cmd, sc, stdin, depth, words))
            self.ctx.cwd = saved

    def _substitutions(self, cmd: Command, depth: int) -> None:
        """``$(...)``, backticks and ``<(...)`` in words, redirections and assignments run first, as
        commands of their own (a ``cd`` inside them does not leak out)."""
        for w in [*cmd.words, *(r.target for r in cmd.redirs if r.target), *(v for _n, v in cmd.assigns)]:
            for p in w.parts:
                bodies = [p.text] if p.kind in ("sub", "proc") else substitutions(p.text) if p.kind == "arith" else []
                for body in bodies:
                    saved = self.ctx.cwd, dict(self.ctx.vars)
                    self.script(body, depth + 1)
                    self.ctx.cwd, self.ctx.vars = saved

    def _assignments(self, cmd: Command, sc: Script, depth: int) -> None:
        """A command of only ``VAR=value`` (and redirections): remember the values."""
        from .hidden import program_var

        for name, w in cmd.assigns:
            vals = self.expand(w)
            self.ctx.vars[name] = vals[0]
            program_var(self, name, vals[0], depth)
        self._redirs(cmd, None, depth, sc)

    def _runs_nothing(self, cmd: Command, words: list[list[str]]) -> bool:
        """``for x in ...`` (its values are remembered for the loop body), case/select heads and
        function definitions run nothing themselves."""
        flat = [v for vs in words for v in vs[:1]]
        if flat and flat[0] == "for" and len(flat) >= 3 and flat[2] == "in":
            vals = [v for vs in words[3:] for v in vs]
            if vals:
                self.ctx.vars[flat[1]] = "\x01".join(vals[:MAX_EXPANSIONS])
            return True
        return bool(flat and flat[0] in ("case", "select", "function") or cmd.funcdef)

    def _shell_state(self, inv: Invocation) -> bool:
        """Builtins that change what later commands see (cd, pushd/popd, export...): follow them."""
        if inv.name in ("cd", "pushd", "chdir"):
            if inv.name == "pushd":
                self.dirs.append(self.ctx.cwd)
            self._cd(inv.args)
        elif inv.name == "popd":
            self.ctx.cwd = self.dirs.pop() if self.dirs and not inv.args else None
        elif inv.name == "alias":
            for x in inv.args:
                name, eq, value = x.partition("=")
                if eq:
                    self.aliases[name] = value
        elif inv.name in ("export", "declare", "typeset", "local"):
            from .hidden import program_var

            for a in inv.args:
                if "=" in a and not a.startswith("-"):
                    k, v = a.split("=", 1)
                    self.ctx.vars[k] = v
                    program_var(self, k, v, 0)
        else:
            return False
        return True

    def _cd(self, args: list[str]) -> None:
        args = [a for a in args if a not in ("-P", "-L", "-e", "--")]
        if not args:
            self.ctx.cwd = self.ctx.home
            return
        if args[0] == "-":
            self.ctx.cwd = None
            return
        self.ctx.cwd = targets.resolve(self.ctx, args[0])
        if self.ctx.cwd and UNKNOWN in self.ctx.cwd:
            self.ctx.cwd = None

    def _stdin(self, cmd: Command, sc: Script) -> Stdin:
        from .rules_exec import producer_info

        for r in cmd.redirs:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                text = r.heredoc
                if not r.heredoc_quoted:
                    text = self._expand_text(text)
                return Stdin("text", text)
            if r.op == "<<<" and r.target is not None:
                return Stdin("text", self.expand(r.target)[0])
            if r.op == "<" and r.target is not None and r.fd in ("", "0"):
                path = self.expand(r.target)[0]
                info = Stdin("unknown")
                if targets.secret_at(self.ctx, path):
                    info.secret = path
                return info
        if cmd.stage == 0:
            return Stdin()
        prev = [c for c in sc.pipeline_of(cmd) if c.stage < cmd.stage]
        return producer_info(self, prev)

    def _expand_text(self, text: str) -> str:
        """Expand $VAR and $(...) in an unquoted heredoc body (unknowns stay marked)."""
        if "$" not in text and "`" not in text:
            return text
        sc = parse("x \"" + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
        if sc.commands and len(sc.commands[0].words) >= 2:
            for p in sc.commands[0].words[1].parts:
                if p.kind in ("sub", "proc"):
                    self.script(p.text, 1)
            return self.expand(sc.commands[0].words[1])[0]
        return text

    def _redirs(self, cmd: Command, call: Call | None, depth: int, sc: Script) -> None:
        from . import startup
        from .rules_fs import judge_write

        for r in cmd.redirs:
            if r.target is None or r.op in ("<<", "<<-", "<<<", "<", "<&"):
                continue
            if r.op in (">&", "<&") and (r.target.literal() or "").strip("-").isdigit():
                continue
            if r.op == ">&" and (r.target.literal() or "") == "-":
                continue
            for path in self.expand(r.target):
                if r.op == ">>" and call is not None and startup.inert_append(self, path, cmd, call):
                    continue
                judge_write(self, path, f"the redirection `{r.fd}{r.op} {path}`".replace(UNKNOWN, "$…"))


def _bash(cmd: str, cwd: str | None, env: dict[str, str]) -> Decision:
    ctx = targets.make_ctx(cwd, env)
    a = Analyzer(ctx)
    a.script(cmd)
    return combine(a.findings)


def analyze_tool(tool_name: str, tool_input: dict, cwd: str | None, env: dict[str, str],
                 mcp_allow: list[str] | None = None, mcp_deny: list[str] | None = None) -> Decision:
    if tool_name in ("Bash", "PowerShell"):
        cmd = tool_input.get("command")
        if not isinstance(cmd, str):
            return Decision("allow", [])
        return _bash(cmd, cwd, env)
    if tool_name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if not isinstance(path, str) or not path:
            return Decision("allow", [])
        from .rules_fs import judge_write

        ctx = targets.make_ctx(cwd, env)
        a = Analyzer(ctx)
        path = targets.expand_tilde(ctx, path)
        judge_write(a, path, f"{tool_name} of {path}", existing=tool_name != "Write")
        rules_self.file_content(a, path, _new_text(tool_input), f"{tool_name} of {path}")
        return combine(a.findings)
    if tool_name == "apply_patch":
        return _patch(tool_input, cwd, env)
    return _other_tool(tool_name, tool_input, cwd, env, mcp_allow, mcp_deny)


def _patch(tool_input: dict, cwd: str | None, env: dict[str, str]) -> Decision:
    """Codex's ``apply_patch``: each file its headers name is judged as what the patch does to it, with the
    same rules: an added file as a Write, an updated one as an Edit (with the lines it adds), a deleted
    one as ``rm`` of it. A patch that names no file is allowed (Codex refuses it itself)."""
    import os
    import shlex

    from ..codex_rollout import patch_sections

    text = next((tool_input[k] for k in ("command", "input", "patch") if isinstance(tool_input.get(k), str)), "")
    base = cwd or env.get("PWD") or "."
    findings: list = []
    for op, path, added in patch_sections(text):
        full = path if os.path.isabs(path) or path.startswith("~") else os.path.join(base, path)
        if op == "Delete":
            d = _bash(f"rm -f -- {shlex.quote(full)}", cwd, env)
        else:
            d = analyze_tool("Write" if op == "Add" else "Edit", {"file_path": full, "content": added}, cwd, env)
        findings += d.findings or []
    return combine(findings)


def _other_tool(tool_name: str, tool_input: dict, cwd: str | None, env: dict[str, str],
                mcp_allow: list[str] | None = None, mcp_deny: list[str] | None = None) -> Decision:
    """Read/Grep/Glob, WebFetch/WebSearch and MCP tools (:mod:`.rules_tools`); anything else is allowed."""
    from . import rules_tools

    a = Analyzer(targets.make_ctx(cwd, env))
    if tool_name in rules_tools.READ_TOOLS:
        rules_tools.reads(a, tool_name, tool_input)
    elif tool_name in rules_tools.WEB_TOOLS:
        rules_tools.web(a, tool_name, tool_input)
    elif tool_name.startswith("mcp__"):
        rules_tools.mcp(a, tool_name, tool_input, mcp_allow or [], mcp_deny or [])
    return combine(a.findings)


def _new_text(tool_input: dict) -> str:
    """The text a Write/Edit/MultiEdit/NotebookEdit puts into its file."""
    parts = [tool_input.get(k) for k in ("content", "new_string", "new_source")]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        parts += [e.get("new_string") for e in edits if isinstance(e, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def _printed(inv: Invocation, cmd: Command, a: Analyzer) -> str:
    """What ``echo``, ``printf`` or ``cat <<EOF`` prints (UNKNOWN when it cannot be known)."""
    args = list(inv.args)
    if inv.name == "cat":
        if args:
            return UNKNOWN
        for r in cmd.redirs:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                return r.heredoc if r.heredoc_quoted else a._expand_text(r.heredoc)
        return UNKNOWN
    from .rules_exec import printed_text

    return printed_text(inv.name, args)


def _iterations(words: list[list[str]]) -> list[list[str]]:
    """The argument lists a command runs with: a word with several values (a loop variable) takes one
    value per run of the loop body, as bash does (``for b in x y; do git checkout $b`` is two branch
    switches, not ``git checkout x y``)."""
    n = max((len(vs) for vs in words), default=1)
    return [[vs[k % len(vs)] for vs in words] for k in range(n)]
