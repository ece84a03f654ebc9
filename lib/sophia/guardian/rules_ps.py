"""PowerShell's own destructive verbs (the PowerShell tool of Windows sessions is judged like Bash)."""

from __future__ import annotations

from . import rules_fs
from .lazyre import LazyRe
from .wrappers import Invocation

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

REMOVE_ITEM = ("remove-item", "ri", "del", "erase", "rd")
# A drive root, a user's profile folder, or the variables that name them (raw text: bash eats backslashes).
_HOME_OR_ROOT = LazyRe(
    r"""(?i)^['"]?(?:[a-z]:[\\/]?|[a-z]:[\\/](?:users|documents and settings)(?:[\\/][^\\/'"]+)?[\\/]?|"""
    r"""~[\\/]?|\$home[\\/]?|\$env:(?:userprofile|home|homedrive|systemroot|windir|programfiles)[\\/]?|"""
    r"""\$env:homedrive\$env:homepath[\\/]?)['"]?$""")
_VALUE_OPTS = ("-filter", "-include", "-exclude", "-credential", "-stream")


def remove_item(a: Analyzer, call: Call) -> None:
    """``Remove-Item -Recurse [-Force] PATH``: a drive root or a profile folder is denied; other paths are
    judged as ``rm -r`` would judge them."""
    raw = [w.raw for w in call.cmd.words[1:]]
    recurse = any(x.lower().startswith("-r") and "-recurse".startswith(x.lower()) for x in raw)
    paths = _paths(raw)
    if recurse and any(_HOME_OR_ROOT.search(p) for p in paths):
        a.add("deny", "rm_recursive", f"`{call.show()}` deletes a drive root or a home folder recursively",
              rules_fs.INSTEAD_DELETE)
        return
    args = _paths(call.args)
    inv = Invocation("rm", (["-rf"] if recurse else ["-f"]) + ["--", *args])
    rules_fs.rm(a, type(call)(inv, call.cmd, call.script, call.stdin, call.depth, call.words))


def _paths(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for x in words:
        low = x.lower()
        if skip:
            skip = False
        elif low in ("-path", "-literalpath"):
            continue
        elif low in _VALUE_OPTS:
            skip = True
        elif not low.startswith("-"):
            out.append(x)
    return out
