"""Destructive subcommands as data: one entry per program, matched here.

A rule family keeps a table ``{program: Pack(...)}``: each :class:`Pack` lists the program's rules,
``rule(words, level, what, opts, unless)``, and how to read its command line (its options that take a
separate value, the options that make any call a preview). Adding a tool is one entry; the prefilter's
words come from the same table (``dispatch.programs()``), so the two cannot drift. :func:`judge` finds
the worst rule a call matches and reports it as ``"<command> <what>"``.

``words`` are the subcommand words, in order, from the first word that is not an option:

- ``"s3 rm"``: ``s3`` then ``rm``; ``"delete|rm"``: either; ``"delete-*"``: a glob (``*`` only);
- ``"*"``: any one word; ``"**"``: any run of up to four words (``gcloud compute instances delete``
  is ``"** delete"``); ``""``: any call of the program;
- a word such as ``ns/prod`` or ``pv,pvc`` also matches as ``ns``, ``pv`` and ``pvc`` (kubectl's forms).

``opts``: the rule applies only with one of these options (space-separated); ``a+b`` needs both;
``-X=DELETE`` is that option with that value (``-X DELETE``, ``-X=delete``, ``-XDELETE``); a
two-letter option also counts inside a cluster (``-r`` in ``-rf``) unless the pack says otherwise.
``unless``: options (or, without a leading ``-``, words) that make the call harmless, such as a dry run.
"""

from __future__ import annotations

from .decision import RANK

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

Rule = tuple[str, str, str, str, str]  # words, level, what, opts, unless
_SPAN = 4  # "**" covers at most this many words: a verb sits near the front, values follow it


def rule(words: str, level: str, what: str, opts: str = "", unless: str = "") -> Rule:
    return (words, level, what, opts, unless)


class Pack:
    """One program's destructive rules and how to read its command line."""

    __slots__ = ("rules", "safe", "takes", "colon", "clusters", "instead")

    def __init__(self, rules: list[Rule], safe: str = "-h --help", takes: str = "", colon: bool = False,
                 clusters: bool = True, instead: str = "") -> None:
        self.rules = rules
        self.safe = safe.split()  # options or words that make any call harmless (help, dry runs)
        self.takes = frozenset(takes.split())  # options whose value is the next word
        self.colon = colon  # `apps:destroy` is the words `apps destroy` (heroku, firebase, netlify)
        self.clusters = clusters  # `-rf` holds `-r` and `-f` (not for `-destroy`-style options)
        self.instead = instead


def judge(a: Analyzer, call: Call, pack: Pack, rule_name: str, instead: str, args: list[str] | None = None) -> None:
    """Report the worst rule of ``pack`` that the call (or ``args`` in its place) matches."""
    found = worst(pack, call.args if args is None else args)
    if found:
        a.add(found[1], rule_name, f"`{call.show()}` {found[2]}", pack.instead or instead)


def worst(pack: Pack, args: list[str]) -> Rule | None:
    """The most severe rule the arguments match, or None (also for a help or dry-run call)."""
    pos = positionals(pack, args)
    if any(_flag(pack, args, pos, s, clusters=False) for s in pack.safe):
        return None
    best: Rule | None = None
    for r in pack.rules:
        words, level, _what, opts, unless = r
        if best is not None and RANK[level] <= RANK[best[1]]:
            continue
        if not _seq(words.split(), pos):
            continue
        if opts and not any(all(_flag(pack, args, pos, o) for o in alt.split("+")) for alt in opts.split()):
            continue
        if unless and any(_flag(pack, args, pos, u) for u in unless.split()):
            continue
        best = r
    return best


def positionals(pack: Pack, args: list[str]) -> list[str]:
    """The words that are not options nor option values, lower-cased (after ``--``, every word)."""
    out: list[str] = []
    skip = False
    for i, x in enumerate(args):
        if skip:
            skip = False
        elif x == "--":
            out.extend(w.lower() for w in args[i + 1:])
            break
        elif x.startswith("-") and len(x) > 1:
            skip = x in pack.takes
        elif pack.colon and ":" in x and "/" not in x:
            out.extend(w.lower() for w in x.split(":") if w)
        else:
            out.append(x.lower())
    return out


def _seq(spec: list[str], pos: list[str]) -> bool:
    """Whether the positional words start with the ``spec`` words ("*" one word, "**" up to _SPAN)."""
    if not spec:
        return True
    head, rest = spec[0], spec[1:]
    if head == "**":
        return any(_seq(rest, pos[i:]) for i in range(min(_SPAN, len(pos)) + 1))
    return bool(pos) and (head == "*" or _word(head, pos[0])) and _seq(rest, pos[1:])


def _word(alts: str, w: str) -> bool:
    forms = {w}
    if "," in w or "/" in w:
        forms.update(part.split("/", 1)[0] for part in w.split(","))
    return any(_glob(p, f) for p in alts.lower().split("|") for f in forms)


def _glob(pat: str, s: str) -> bool:
    if "*" not in pat:
        return pat == s
    parts = pat.split("*")
    if not (s.startswith(parts[0]) and s.endswith(parts[-1])) or len(s) < len(parts[0]) + len(parts[-1]):
        return False
    i = len(parts[0])
    for mid in parts[1:-1]:
        j = s.find(mid, i, len(s) - len(parts[-1]))
        if j < 0:
            return False
        i = j + len(mid)
    return True


def _flag(pack: Pack, args: list[str], pos: list[str], opt: str, clusters: bool = True) -> bool:
    """Whether the call carries the option ``opt`` (see the module docstring), or the word ``opt``. A help
    or dry-run option of the pack's ``safe`` is only taken as spelled (``-auth`` holds no ``-h``)."""
    if not opt.startswith("-"):
        return opt in pos
    name, _, value = opt.partition("=")
    if value:
        return _valued(args, name, value.lower())
    cluster = clusters and pack.clusters and len(opt) == 2
    return any(x == opt or x.startswith(opt + "=") or cluster and _in_cluster(x, opt[1]) for x in args)


def _valued(args: list[str], name: str, value: str) -> bool:
    """``name`` with ``value``: ``-X DELETE``, ``-X=delete``, ``-XDELETE``, ``--method=DELETE``."""
    glued = (f"{name}={value}".lower(), f"{name}{value}".lower())
    return any(x.lower() in glued or x == name and i + 1 < len(args) and args[i + 1].lower() == value
               for i, x in enumerate(args))


def _in_cluster(x: str, letter: str) -> bool:
    return len(x) > 2 and x[0] == "-" and x[1] != "-" and x[1:].isalpha() and letter in x[1:]
