"""Appends to shell start-up files that only add inert settings (``echo 'export X=1' >> ~/.zshrc``).

A shell start-up file runs in every new terminal, so writing one is denied (:mod:`.targets`). The one
exception is the everyday setup step: appending lines that run nothing. A line is inert when it is
blank, a comment, or ``[export] NAME=value`` where the value is literal (no command substitution,
separators or redirections), NAME is not one that changes what programs load, run, trust or talk to
(the loader, the prompt, the kit's and Claude Code's own settings, ``ANTHROPIC_BASE_URL``, interpreters'
and toolchains' options, proxies, certificates, anything naming a program, folder or server), the value
carries no credential, and a ``PATH`` it sets only adds folders in HOME or under ``/usr/local`` and
``/opt``, never the current folder.
Anything else (an ``alias``, a ``source``, a secret, an edit with ``sed -i``) keeps the verdict.
Standard library only.
"""

from __future__ import annotations

import re

from . import targets
from .lazyre import LazyRe
from .shell import UNKNOWN, Command

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

_ASSIGN = LazyRe(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
# Variables that change what programs load, run, trust or talk to: the loader, the shell itself, the kit
# and Claude Code, interpreters and toolchains, anything naming a program, options, a folder of config
# or code, a server, proxy or certificate, or a credential.
_RISKY_NAME = LazyRe(
    r"^(?:LD_\w+|DYLD_\w+|PROMPT_COMMAND|PROMPT|RPROMPT|PS\d|BASH_\w+|ENV|IFS|ZDOTDIR|FPATH|fpath|CDPATH|MANPATH|"
    r"NULLCMD|READNULLCMD|HIST\w*|SAVEHIST|HOME|TMPDIR|SHELL|EDITOR|VISUAL|BROWSER|\w*PAGER|LESS\w*|TERMINFO\w*|"
    r"SOPHIA_\w*|CLAUDE\w*|ANTHROPIC_\w*|OPENAI_\w*|XDG_\w+|NODE_\w+|NPM_\w+|PYTHON\w*|PIP_\w+|PERL\w*|RUBY\w*|"
    r"GEM_\w+|BUNDLE_\w+|GIT_\w+|SSH_\w+|SUDO_\w+|DOCKER_\w+|KUBECONFIG|AWS_\w+|GOOGLE_\w+|AZURE_\w+|GO\w*FLAGS|"
    r"CC|CXX|CPP|LD|AR|AS|MAKEFLAGS|C\w*FLAGS|RUSTC\w*|CARGO_\w+|JAVA\w*|_JAVA_\w+|"
    r"\w*_(?:PROXY|proxy|URL|URI|ENDPOINT|HOST|SERVER|WRAPPER|COMMAND|CMD|HOOK|OPTS|OPTIONS|FLAGS|HOME|PATH|DIR|"
    r"EXEC\w*|BIN|PROGRAM|PRELOAD|CONFIG\w*|REGISTRY|INDEX\w*|CERT\w*|BUNDLE|CA\w*|SSL\w*|TLS\w*|KEY\w*|"
    r"TOKEN\w*|SECRET\w*|PASS\w*|AUTH\w*))$"
)
_UNQUOTED_META = LazyRe(r"[;&|<>`]|\$\(|\n")
_PATH_VAR = LazyRe(r"\$(?:\{PATH\}|PATH)")


def inert_append(a: Analyzer, path: str, cmd: Command, call: Call) -> bool:
    """Whether ``cmd`` (echo, printf, cat with a here-document) appends to ``path`` only inert settings
    of a shell start-up file."""
    full = targets.resolve(a.ctx, path)
    if full is None or targets.home_rel(a.ctx, full) not in targets.STARTUP_FILES:
        return False
    from .analyze import Stdin
    from .rules_exec import stage_output

    out = Stdin("unknown")
    stage_output(a, cmd, call.inv, out)
    return out.kind == "text" and inert(out.text, a.ctx.home)


def inert(text: str, home: str) -> bool:
    """Whether every line of ``text`` (what is appended) is blank, a comment or an inert assignment."""
    if UNKNOWN in text:
        return False
    return all(_inert_line(line.strip(), home) for line in text.splitlines())


def _inert_line(line: str, home: str) -> bool:
    if not line or line.startswith("#"):
        return True
    m = _ASSIGN.match(line)
    if not m or _RISKY_NAME.match(m.group(1)):
        return False
    value = _unquote(m.group(2))
    if value is None or _UNQUOTED_META.search(value):
        return False
    if m.group(1) == "PATH":
        return _path_value_ok(value, home)
    from .rules_tools import carries_secret

    return carries_secret(line) is None


def _unquote(v: str) -> str | None:
    """The value of one shell word: plain, "double" or 'single' quoted; None if it is more than one."""
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        inner = v[1:-1]
        return None if v[0] in inner else inner
    return None if any(ch in v for ch in " \t\"'\\") else v


def _path_value_ok(value: str, home: str) -> bool:
    """Each entry of a PATH value is $PATH itself or a folder in HOME, /usr/local or /opt."""
    for entry in value.split(":"):
        if _PATH_VAR.fullmatch(entry):
            continue
        full = re.sub(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)", home, entry)
        if "$" in full or ".." in full.split("/") or not full.startswith(("/usr/local/", "/opt/", home + "/")):
            return False
    return True
