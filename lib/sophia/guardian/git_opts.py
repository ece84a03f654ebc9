"""git's own option tables, and argv spelled out in full.

git's parse-options takes any unambiguous prefix of a long option (``git reset --ha`` is ``--hard``,
``git branch --del --forc`` is ``--delete --force``, ``git switch --discard-ch`` is
``--discard-changes``; an ambiguous one, like ``git push --forc``, is refused) and reads a cluster of short
options letter by letter, a letter that takes a value taking the rest of the word (``git checkout
-bfeature`` creates the branch ``feature``: it is not ``-f``). :func:`normalize` applies both, so the git
rules read canonical words.

The table is data from git itself: the options each subcommand lists in ``git <subcommand> -h`` (git
2.39.5). In each entry, the long options (``name=`` takes a value, ``name?`` takes an optional
``=value``), then the short options that take a value.
"""

from __future__ import annotations

_TABLE = {
    "reset": ("quiet no-refresh mixed soft hard merge keep recurse-submodules? patch "
              "intent-to-add pathspec-from-file= pathspec-file-nul", ""),
    "push": ("verbose quiet repo= all mirror delete tags dry-run porcelain force "
             "force-with-lease? force-if-includes recurse-submodules= thin receive-pack= exec= "
             "set-upstream progress prune no-verify follow-tags signed? atomic push-option= ipv4 "
             "ipv6", "o"),
    "checkout": ("guess overlay quiet recurse-submodules? progress merge conflict= detach track? "
                 "force orphan= overwrite-ignore ignore-other-worktrees ours theirs patch "
                 "ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul", "Bb"),
    "switch": ("create= force-create= guess discard-changes quiet recurse-submodules? progress "
               "merge conflict= detach track? force orphan= overwrite-ignore "
               "ignore-other-worktrees", "Cc"),
    "restore": ("source= staged worktree ignore-unmerged overlay quiet recurse-submodules? "
                "progress merge conflict= ours theirs patch ignore-skip-worktree-bits "
                "pathspec-from-file= pathspec-file-nul", "s"),
    "clean": ("quiet dry-run force interactive exclude=", "e"),
    "branch": ("verbose quiet track? set-upstream-to= unset-upstream color? remotes contains= "
               "no-contains= abbrev? all delete move copy list show-current create-reflog "
               "edit-description force merged= no-merged= column? sort= points-at= ignore-case "
               "recurse-submodules format=", "u"),
    "rm": ("dry-run quiet cached force ignore-unmatch sparse pathspec-from-file= "
           "pathspec-file-nul", ""),
    "gc": ("quiet prune? cruft aggressive auto force keep-largest-pack", ""),
    "update-ref": ("no-deref stdin create-reflog", "m"),
    "rebase": ("onto= keep-base no-verify quiet verbose no-stat signoff "
               "committer-date-is-author-date reset-author-date ignore-whitespace whitespace= "
               "force-rebase no-ff continue skip abort quit edit-todo show-current-patch apply "
               "merge interactive rerere-autoupdate empty= autosquash update-refs gpg-sign? "
               "autostash exec= rebase-merges? fork-point strategy= strategy-option= root "
               "reschedule-failed-exec reapply-cherry-picks", "CXsx"),
    "fetch": ("verbose quiet all set-upstream append atomic upload-pack= force multiple tags "
              "jobs= prefetch prune prune-tags recurse-submodules? dry-run write-fetch-head keep "
              "update-head-ok progress depth= shallow-since= shallow-exclude= deepen= unshallow "
              "refetch update-shallow refmap= server-option= ipv4 ipv6 negotiation-tip= "
              "negotiate-only filter= auto-maintenance auto-gc show-forced-updates "
              "write-commit-graph stdin", "jo"),
    "pull": ("verbose quiet progress recurse-submodules? rebase? stat log? signoff? squash commit "
             "edit cleanup= ff ff-only verify verify-signatures autostash strategy= "
             "strategy-option= gpg-sign? allow-unrelated-histories all append upload-pack= force "
             "tags prune jobs? dry-run keep depth= shallow-since= shallow-exclude= deepen= "
             "unshallow update-shallow refmap= server-option= ipv4 ipv6 negotiation-tip= "
             "show-forced-updates set-upstream", "Xos"),
    "clone": ("verbose quiet progress reject-shallow no-checkout bare mirror local no-hardlinks "
              "shared recurse-submodules? recursive? jobs= template= reference= "
              "reference-if-able= dissociate origin= branch= upload-pack= depth= shallow-since= "
              "shallow-exclude= single-branch no-tags shallow-submodules separate-git-dir= "
              "config= server-option= ipv4 ipv6 filter= also-filter-submodules remote-submodules "
              "sparse bundle-uri=", "bcjou"),
    "grep": ("cached no-index untracked exclude-standard recurse-submodules invert-match "
             "ignore-case word-regexp text textconv recursive max-depth= extended-regexp "
             "basic-regexp fixed-strings perl-regexp line-number column full-name "
             "files-with-matches name-only files-without-match null only-matching count color? "
             "break heading context= before-context= after-context= threads= show-function "
             "function-context and or not quiet all-match open-files-in-pager? ext-grep "
             "max-count=", "ABCefm"),
    "difftool": ("gui dir-diff no-prompt symlinks tool= tool-help trust-exit-code extcmd= "
                 "no-index", "tx"),
    "commit": ("quiet verbose file= author= date= message= reedit-message= reuse-message= fixup= "
               "squash= reset-author trailer= signoff template= edit cleanup= status gpg-sign? "
               "all include interactive patch only no-verify dry-run short branch ahead-behind "
               "porcelain long null amend no-post-rewrite untracked-files? pathspec-from-file= "
               "pathspec-file-nul", "CFcmt"),
    "merge": ("stat summary log? squash commit edit cleanup= ff ff-only rerere-autoupdate "
              "verify-signatures strategy= strategy-option= message= file= into-name= verbose "
              "quiet abort quit continue allow-unrelated-histories progress gpg-sign? autostash "
              "overwrite-ignore signoff no-verify", "FXms"),
    "stash push": ("keep-index staged patch quiet include-untracked all message= "
                   "pathspec-from-file= pathspec-file-nul", "m"),
    "stash drop": ("quiet", ""),
    "stash pop": ("quiet index", ""),
    "stash apply": ("quiet index", ""),
    "worktree remove": ("force", ""),
    "worktree add": ("force detach checkout lock reason= quiet track guess-remote", "Bb"),
    "reflog expire": ("dry-run rewrite updateref verbose expire= expire-unreachable= stale-fix "
                      "all", ""),
    "ls-remote": ("quiet upload-pack= tags heads refs get-url sort= exit-code symref "
                  "server-option=", "o"),
    "archive": ("format= prefix= add-file= add-virtual-file= output= worktree-attributes verbose "
                "list remote= exec=", "o"),
    "cherry-pick": ("quit continue abort skip cleanup= no-commit edit signoff mainline= "
                    "rerere-autoupdate strategy= strategy-option= gpg-sign? ff allow-empty "
                    "allow-empty-message keep-redundant-commits", "Xm"),
    "revert": ("quit continue abort skip cleanup= no-commit edit signoff mainline= "
               "rerere-autoupdate strategy= strategy-option= gpg-sign? reference", "Xm"),
    "tag": ("list delete verify annotate message= file= edit sign cleanup= local-user= force "
            "create-reflog column? contains= no-contains= merged= no-merged= sort= points-at= "
            "format= color? ignore-case", "Fmu"),
}
_PARSED: dict[str, tuple[dict[str, str], str]] = {}


def _options(key: str) -> tuple[dict[str, str], str] | None:
    """(long option -> "" | "=" | "?", short letters that take a value) of a subcommand, or None."""
    if key not in _TABLE:
        return None
    if key not in _PARSED:
        longs, shorts = _TABLE[key]
        table = {}
        for n in longs.split():
            kind = n[-1] if n[-1] in "=?" else ""
            table[n.rstrip("=?")] = kind
        _PARSED[key] = (table, shorts)
    return _PARSED[key]


def resolve(name: str, longs: dict[str, str]) -> str | None:
    """The long option ``--name`` means: itself, its negation, or the one option it is a prefix of. git
    refuses an ambiguous prefix; when every option it could be extends one of them (``git push --forc``:
    --force, --force-with-lease, --force-if-includes) it is read as that one, the most forceful reading,
    as a git that has only that option would (a command git refuses is stopped, never one it runs)."""
    if name in longs or name.startswith("no-") and name[3:] in longs:
        return name
    found = [n for n in longs if n.startswith(name)]
    if len(found) > 1:
        shortest = min(found, key=len)
        found = [shortest] if all(n.startswith(shortest) for n in found) else found
    return found[0] if len(found) == 1 else None


def table_key(sub: str, rest: list[str]) -> str:
    """The table entry of a subcommand (``stash drop``, ``worktree remove`` ...; bare ``git stash`` is
    ``stash push``)."""
    if sub in ("stash", "worktree", "reflog"):
        nxt = rest[0] if rest else ""
        if f"{sub} {nxt}" in _TABLE:
            return f"{sub} {nxt}"
        return "stash push" if sub == "stash" and (not rest or nxt.startswith("-")) else sub
    return sub


def normalize(sub: str, rest: list[str]) -> list[str]:
    """``rest`` (the words after the subcommand) with long options in full and short clusters split: a
    value stays the word after its option. Unknown subcommands and options are left as typed."""
    key = table_key(sub, rest)
    opts = _options(key)
    if opts is None:
        return rest
    lead = rest[:1] if " " in key and rest[:1] == [key.split()[1]] else []
    longs, shorts = opts
    out = list(lead)
    i = len(lead)
    while i < len(rest):
        x = rest[i]
        if x == "--":
            return out + rest[i:]
        took = _long(x, rest, i, longs, out) if x.startswith("--") else _short(x, rest, i, shorts, out)
        i += took
    return out


def _long(x: str, rest: list[str], i: int, longs: dict[str, str], out: list[str]) -> int:
    name, eq, val = x[2:].partition("=")
    full = resolve(name, longs) if name else None
    if full is None:
        out.append(x)
        return 1
    out.append("--" + full + eq + val)
    if longs.get(full) == "=" and not eq and i + 1 < len(rest):
        out.append(rest[i + 1])
        return 2
    return 1


def _short(x: str, rest: list[str], i: int, shorts: str, out: list[str]) -> int:
    if not x.startswith("-") or len(x) < 2:
        out.append(x)
        return 1
    for k in range(1, len(x)):
        out.append("-" + x[k])
        if x[k] in shorts:
            if k + 1 < len(x):
                out.append(x[k + 1:])
                return 1
            if i + 1 < len(rest):
                out.append(rest[i + 1])
                return 2
            return 1
    return 1
