"""What git runs besides itself: aliases, configuration that names a command, and options that take one.

A command line can define git configuration for one run (``git -c alias.x=reset x --hard``,
``--config-env``, ``GIT_CONFIG_COUNT`` with ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``,
``GIT_CONFIG_PARAMETERS``) or for good (``git config alias.x '!cmd'``). An alias is judged as what it
expands to (a ``!`` alias is a shell command, given the alias's arguments); a setting that names a program
(``core.pager``, ``core.sshCommand``, ``diff.external``, a filter's ``clean``/``smudge`` ...) is judged as
that command. So are the options that take a command (``rebase --exec``, ``bisect run``, ``submodule
foreach``, ``filter-branch --tree-filter``, ``difftool --extcmd``, ``grep -O``, ``--upload-pack``) and
``ext::`` remote URLs, which run their command to talk to the "remote".
"""

from __future__ import annotations

from .lazyre import LazyRe
from .shell import UNKNOWN

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

MAX_ALIASES = 8
# configuration keys (lower-case; * is a subsection) whose value is a command git runs
_COMMAND_KEY = LazyRe(
    r"^(?:core\.(?:pager|editor|sshcommand|askpass|fsmonitor|gitproxy)|diff\.external|sequence\.editor|"
    r"gpg\.(?:[^.]+\.)?program|pager\.[^.]+|interactive\.difffilter|filter\.[^.]+\.(?:clean|smudge|process)|"
    r"diff\.[^.]+\.(?:textconv|command)|merge\.[^.]+\.driver|uploadpack\.packobjectshook|"
    r"(?:difftool|mergetool|man|browser)\.[^.]+\.(?:cmd|path)|remote\.[^.]+\.(?:uploadpack|receivepack))$")
_BOOLEAN = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
_PARAMS = LazyRe(r"'([^']*)'(?:='([^']*)')?")
_FILTER_OPTS = frozenset({"--setup", "--env-filter", "--tree-filter", "--index-filter", "--parent-filter",
                          "--msg-filter", "--commit-filter", "--tag-name-filter"})
_COMMAND_OPTS = {
    "rebase": ("--exec", "-x"), "difftool": ("--extcmd", "-x"), "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",), "clone": ("--upload-pack", "-u"), "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"), "archive": ("--exec",),
}


def config(a: Analyzer, call: Call, globals_: list[str]) -> dict[str, str]:
    """The configuration this command line gives git (key lower-cased but for its subsection), each
    command-valued setting judged."""
    env = _environment(a, call)
    out: dict[str, str] = {}
    for i, x in enumerate(globals_):
        if x == "-c" and i + 1 < len(globals_):
            _put(out, globals_[i + 1])
        elif x.startswith("--config-env="):
            key, _eq, var = x.split("=", 1)[1].partition("=")
            out[_key(key)] = env.get(var, UNKNOWN)
    count = env.get("GIT_CONFIG_COUNT", "0")
    for n in range(min(int(count), 32) if count.isdigit() else 0):
        name = env.get(f"GIT_CONFIG_KEY_{n}")
        if name:
            out[_key(name)] = env.get(f"GIT_CONFIG_VALUE_{n}", "")
    for m in _PARAMS.finditer(env.get("GIT_CONFIG_PARAMETERS", "")):
        _put(out, m.group(1) if m.group(2) is None else f"{m.group(1)}={m.group(2)}")
    for key, value in out.items():
        judge_setting(a, key, value, call.depth)
    return out


def _environment(a: Analyzer, call: Call) -> dict[str, str]:
    """The variables git sees: set earlier in the line, exported, or given to this command (``VAR=x git``,
    ``env VAR=x git``)."""
    env = dict(a.ctx.vars)
    for name, w in call.cmd.assigns:
        env[name] = a.expand(w)[0]
    for vs in call.words:
        name, eq, value = vs[0].partition("=")
        if eq and name.startswith("GIT_CONFIG"):
            env[name] = value
    return env


def _key(key: str) -> str:
    """A config key as git compares it: section and name case-insensitive, the subsection as written."""
    first, _dot, rest = key.partition(".")
    sub, _d, name = rest.rpartition(".")
    return f"{first.lower()}.{sub + '.' if sub else ''}{name.lower()}"


def _put(out: dict[str, str], pair: str) -> None:
    key, eq, value = pair.partition("=")
    out[_key(key)] = value if eq else "true"


def judge_setting(a: Analyzer, key: str, value: str, depth: int) -> None:
    """A setting whose value git runs as a command: judged as that command."""
    key = _key(key)
    if key.startswith("alias.") or key == "credential.helper":
        if value.startswith("!"):
            a.script(value[1:], depth + 1)
        return
    if _COMMAND_KEY.match(key) and value.lower() not in _BOOLEAN and value != UNKNOWN:
        a.script(value, depth + 1)


def expand_alias(a: Analyzer, cfg: dict[str, str], sub: str, rest: list[str], depth: int) -> list[str] | None:
    """``git <alias> args``: the git arguments it stands for; None when it is not an alias, or when it is a
    shell alias (``!cmd``), which is judged here with its arguments."""
    from .rules_exec import shell_quote

    value = cfg.get(f"alias.{sub.lower()}")
    if value is None:
        return None
    if UNKNOWN in value:
        a.add("ask", "git_destructive", f"`git {sub}` runs an alias defined only at run time",
              "Run the git command it stands for directly.")
        return None
    if value.startswith("!"):
        a.script(value[1:] + "".join(" " + shell_quote(x) for x in rest), depth + 1)
        return None
    from .wrappers import split_string

    return split_string(value) + rest


def git_config_command(a: Analyzer, rest: list[str], depth: int) -> None:
    """``git config [--global] KEY VALUE`` (or ``git config set``): a command-valued setting, kept."""
    words = [x for x in rest if not x.startswith("-")]
    if words[:1] in (["set"], ["--add"]):
        words = words[1:]
    if len(words) >= 2 and "--file" not in rest and "-f" not in rest:
        judge_setting(a, words[0], words[1], depth)


def runs(a: Analyzer, sub: str, rest: list[str], raw: list[str], depth: int) -> None:
    """Options that take a command (``rest`` normalized, ``raw`` as typed), ``bisect run``, ``submodule
    foreach``, ``ext::`` URLs."""
    from .rules_exec import shell_quote

    for cmd in _option_commands(sub, rest, raw):
        a.script(cmd, depth + 1)
    if sub == "bisect" and rest[:1] == ["run"] and len(rest) > 1:
        a.script(" ".join(shell_quote(x) for x in rest[1:]), depth + 1)
    elif sub == "submodule" and "foreach" in rest:
        after = rest[rest.index("foreach") + 1:]
        while after and after[0] in ("--recursive", "-q", "--quiet"):
            after = after[1:]
        if after:
            a.script(" ".join(after), depth + 1)
    for x in rest:
        if x.startswith("ext::"):
            a.script(" ".join(shell_quote(w) for w in _ext_words(x[5:])), depth + 1)


def _option_commands(sub: str, rest: list[str], raw: list[str]) -> list[str]:
    opts = _FILTER_OPTS if sub == "filter-branch" else frozenset(_COMMAND_OPTS.get(sub, ()))
    out = []
    for i, x in enumerate(rest):
        name, eq, val = x.partition("=")
        if name in opts:
            if eq:
                out.append(val)
            elif i + 1 < len(rest):
                out.append(rest[i + 1])
        elif sub == "grep" and name == "--open-files-in-pager" and eq:
            out.append(val)
    if sub == "grep":  # -O<pager>: an optional value, glued
        out += [x[2:] for x in raw if x.startswith("-O") and len(x) > 2]
    return out


def _ext_words(spec: str) -> list[str]:
    """git-remote-ext's command: words split at spaces, ``% `` a space inside a word, ``%%`` a ``%``."""
    words = [""]
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == "%" and i + 1 < len(spec) and spec[i + 1] in " %":
            words[-1] += spec[i + 1]
            i += 2
            continue
        if c == " ":
            words.append("")
        else:
            words[-1] += c
        i += 1
    return [w for w in words if w]
