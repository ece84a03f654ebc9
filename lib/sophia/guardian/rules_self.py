"""The kit protects itself: an agent cannot switch off the guardian or the kit's hooks, nor rewrite the creed.

Writes to the kit's own files (its code, hooks, ``config.json``, ``self_model.json`` with the immutable
creed) are judged by :func:`targets.write_level` like any sensitive path. Here are the other ways off:

- ``disableAllHooks``: set through any command (``jq``, ``claude --settings``, ``echo ... >``) or a
  Write/Edit of a JSON file that sets it;
- ``claude config set|add|remove`` on a hooks key; ``claude plugin uninstall|disable`` of this kit;
- ``s3 uninstall``, ``s3 guardian allow-once`` and the kit's ``uninstall.sh``.

Each is denied with a reason that tells the user how to make the change themselves.
"""

from __future__ import annotations

import re

from . import targets
from .lazyre import LazyRe

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

RULE = "self_protect"
INSTEAD = ("Only the user may change this: tell them what to change and why; they can do it themselves "
           "outside Claude Code (edit the file in an editor, or run the command in their own terminal).")
# programs that only read or search text: naming the setting is not setting it
READERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "less", "more", "head", "tail", "bat",
                     "batcat", "wc", "git", "diff", "file", "stat", "ls", "find", "fd", "fdfind"})
_DISABLE = "disableallhooks"
_SETS_DISABLE = LazyRe(r"disableAllHooks\W{0,3}\s*[:=]\s*\W{0,3}\s*true", re.I)
_CONFIG_WRITES = frozenset({"set", "add", "remove", "rm", "unset"})
_PLUGIN_OFF = frozenset({"uninstall", "remove", "rm", "disable"})
_KIT_NAMES = ("sophia",)  # the plugin is sophia-system3
# A repository's team memory (<repo>/.sophia/team, targets.team_memory): its writes, deletes and
# `s3 team share` ask, in every rule family that sees one.
TEAM_RULE = "team_memory"
TEAM_INSTEAD = ("Team memory is changed by people, through review: tell the user what to add, change or "
                "remove (they share an item with `s3 team share ID` or edit its file).")


def deny(a: Analyzer, what: str) -> None:
    a.add("deny", RULE, what, INSTEAD)


def mentions_disable(a: Analyzer, call: Call) -> None:
    """A command (other than a reader) whose arguments carry ``disableAllHooks``."""
    if call.name in READERS:
        return
    hit = next((x for x in call.args if _DISABLE in x.lower()), None)
    if hit is None:
        return
    if call.name == "jq" and not _SETS_DISABLE.search(hit):
        return  # jq reading the setting
    deny(a, f"`{call.show()}` would set disableAllHooks, which switches off every hook, the guardian included")


def claude(a: Analyzer, call: Call) -> None:
    """``claude config set hooks ...`` and ``claude plugin uninstall sophia``."""
    args = [x.lower() for x in call.args]
    if len(args) >= 2 and args[0] == "config" and args[1] in _CONFIG_WRITES:
        if any("hook" in x for x in args[2:]):
            deny(a, f"`{call.show()}` changes Claude Code's hook settings, which run the guardian")
    elif (len(args) >= 2 and args[0] == "plugin" and args[1] in _PLUGIN_OFF
          and any(any(k in x for k in _KIT_NAMES) for x in args[2:])):
        deny(a, f"`{call.show()}` removes or disables the Sophia kit and its guardian")


def s3(a: Analyzer, call: Call) -> None:
    if call.args[:1] == ["uninstall"]:
        deny(a, f"`{call.show()}` uninstalls the Sophia kit and its guardian")
    elif call.args[:2] == ["guardian", "allow-once"]:
        deny(a, f"`{call.show()}` would let a call the guardian stopped through; only the user may grant that")
    elif call.args[:2] == ["team", "share"] or (call.args[:2] == ["team", "init"] and "--repo" in call.args):
        a.add("ask", TEAM_RULE, f"`{call.show()}` writes into the repository's team memory: the user's command",
              TEAM_INSTEAD)


def uninstall_script(a: Analyzer, call: Call) -> None:
    """The kit's own ``uninstall.sh`` (found by where it lives, not only by its name)."""
    argv0 = call.inv.argv0 or call.name
    path = targets.resolve(a.ctx, targets.expand_tilde(a.ctx, argv0)) if "/" in argv0 else None
    ours = path is not None and targets.zone(a.ctx, path).kind == "kit"
    if ours:
        deny(a, f"`{call.show()}` uninstalls the Sophia kit and its guardian")


def file_content(a: Analyzer, path: str, text: str, via: str) -> None:
    """A Write/Edit whose new JSON text sets ``disableAllHooks`` to true."""
    if path.lower().endswith(".json") and _SETS_DISABLE.search(text):
        deny(a, f"{via} sets disableAllHooks, which switches off every hook, the guardian included")


TABLE = {"claude": claude, "s3": s3, "uninstall.sh": uninstall_script}
