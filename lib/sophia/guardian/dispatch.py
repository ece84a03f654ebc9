"""Which rule family judges which program."""

from __future__ import annotations

from . import (
    hidden,
    reverse_shell,
    rules_exec,
    rules_fs,
    rules_ps,
    rules_remote,
    rules_self,
    rules_sys,
    rules_vcs_db,
    scripts,
)
from .shell import UNKNOWN
from .wrappers import INTERPRETERS, NET_FETCHERS, SHELLS, interpreter

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

_TABLE = {
    "rm": rules_fs.rm, "unlink": rules_fs.rm, "srm": rules_fs.rm, "rimraf": rules_fs.rm, "del-cli": rules_fs.rm,
    "trash": rules_fs.rm, "trash-put": rules_fs.rm,
    "find": rules_fs.find, "fd": rules_fs.fd, "fdfind": rules_fs.fd,
    "rsync": rules_fs.rsync,
    "tee": rules_fs.tee, "cp": rules_fs.copy_move, "mv": rules_fs.copy_move, "install": rules_fs.copy_move,
    "ln": rules_fs.link, "sed": rules_fs.sed, "truncate": rules_fs.truncate,
    "chmod": rules_fs.perms, "chown": rules_fs.perms, "chgrp": rules_fs.perms,
    "shred": rules_sys.shred, "dd": rules_sys.dd, "wipefs": rules_sys.wipefs, "blkdiscard": rules_sys.blkdiscard,
    "fdisk": rules_sys.partition, "sfdisk": rules_sys.partition, "cfdisk": rules_sys.partition,
    "gdisk": rules_sys.partition, "sgdisk": rules_sys.partition, "parted": rules_sys.partition,
    "hdparm": rules_sys.hdparm, "lvresize": rules_sys.lvresize, **dict.fromkeys(rules_sys.DISKS, rules_sys.disk),
    "kill": rules_sys.kill, "pkill": rules_sys.pkill, "killall": rules_sys.pkill, "killall5": rules_sys.killall5,
    "history": rules_sys.history, "crontab": rules_sys.crontab,
    "shutdown": rules_sys.power, "reboot": rules_sys.power, "halt": rules_sys.power, "poweroff": rules_sys.power,
    "init": rules_sys.power, "telinit": rules_sys.power, "systemctl": rules_sys.systemctl,
    "git": rules_vcs_db.git,
    "psql": rules_vcs_db.psql, "mysql": rules_vcs_db.mysql, "mariadb": rules_vcs_db.mysql,
    "sqlite3": rules_vcs_db.sqlite, "sqlite": rules_vcs_db.sqlite, "duckdb": rules_vcs_db.sqlite,
    "mongo": rules_vcs_db.mongo, "mongosh": rules_vcs_db.mongo, "redis-cli": rules_vcs_db.redis,
    "valkey-cli": rules_vcs_db.redis, "keydb-cli": rules_vcs_db.redis,
    "dropdb": rules_vcs_db.dropdb, "mysqladmin": rules_vcs_db.mysqladmin,
    "clickhouse-client": rules_vcs_db.generic_sql, "clickhouse": rules_vcs_db.generic_sql,
    "cqlsh": rules_vcs_db.generic_sql, "sqlcmd": rules_vcs_db.generic_sql, "cockroach": rules_vcs_db.generic_sql,
    "pgcli": rules_vcs_db.generic_sql, "mycli": rules_vcs_db.generic_sql, "litecli": rules_vcs_db.generic_sql,
    "eval": rules_exec.eval_, "source": rules_exec.source, ".": rules_exec.source,
    "su": rules_exec.su, "watch": rules_exec.watch, "ssh": rules_exec.ssh,
    "parallel": hidden.parallel, "sem": hidden.parallel, "script": hidden.script_command,
    "runuser": rules_exec.su,
    "docker": rules_exec.container, "podman": rules_exec.container, "nerdctl": rules_exec.container,
    **dict.fromkeys(scripts.PACKAGE_MANAGERS, scripts.package), **dict.fromkeys(scripts.MAKES, scripts.make),
    "just": scripts.just, "task": scripts.task, "go-task": scripts.task,
    **dict.fromkeys(rules_ps.REMOVE_ITEM, rules_ps.remove_item),
    **rules_remote.TABLE,
    **rules_self.TABLE,
}

# The rule families whose ``ask`` is high-risk: with ``guardian.tier3_enabled`` such an ask also queues a
# tier-3 s3-guardian audit (:mod:`.tier3`). Each names its family; the other rules' asks (chmod, kill,
# power, crontab, nesting, outward MCP calls) are not audited. tests/guardian/test_tier3.py holds every
# name here to a rule some family really emits.
HIGH_RISK = {
    "rm_recursive": "destructive fs", "find_delete": "destructive fs", "xargs_rm": "destructive fs",
    "rsync_delete": "destructive fs", "interp_rmtree": "destructive fs", "disk": "destructive fs",
    "container_prune": "destructive fs",
    "git_destructive": "vcs history rewrite",
    "sql_destructive": "db drop",
    "infra": "remote destroy",
    "curl_pipe": "remote exec", "eval": "remote exec",
    "credential_read": "credential access", "secret_exfil": "credential access",
    "sensitive_write": "credential access",
    rules_self.RULE: "self-protection",
}

# Programs that print (page, dump, encode, search) the files they are given: judged by those files, as a
# Read of them is (rules_tools.shell_read). They are no prefilter words (`cat` and `grep` are much of agent
# traffic): a command reaches them when it names a credential path, which the prefilter flags
# (rules_tools.prefilter_words(shell=True)).
READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "tac", "xxd", "od", "hexdump",
                     "strings", "base64", "base32", "zcat", "view", "grep", "egrep", "fgrep", "rg", "ag"})

_MKFS = ("mke2fs", "mkswap", "mkntfs", "newfs", "mkdosfs", "mkfs")


def programs() -> frozenset[str]:
    """Every program name some rule family judges (the prefilter's words come from here)."""
    return (frozenset(_TABLE) | frozenset(_MKFS) | SHELLS | frozenset(INTERPRETERS) | NET_FETCHERS
            | rules_exec.NET_SENDERS | reverse_shell.NET_PROGRAMS)


def _every_call(a: Analyzer, call: Call) -> None:
    """The rules that look at any program: a download run, data sent out, the guardian switched off, a
    credential printed, an HTTP DELETE."""
    rules_exec.downloaded_exec(a, call)
    rules_exec.exfiltration(a, call)
    rules_self.mentions_disable(a, call)
    reverse_shell.check(a, call)
    if call.name in READERS:
        from .rules_tools import shell_read

        shell_read(a, call)
    if call.name in rules_remote.HTTP_CLIENTS:
        rules_remote.http(a, call)


def dispatch(a: Analyzer, call: Call) -> None:
    name = call.name
    _every_call(a, call)
    if name in _TABLE:
        _TABLE[name](a, call)
    elif name.startswith("mkfs") or name in _MKFS:
        rules_sys.mkfs(a, call)
    elif name in SHELLS:
        rules_exec.shell(a, call)
    elif interpreter(name):
        if not (name == "bun" and scripts.bun(a, call)):
            rules_exec.interp(a, call, interpreter(name) or "")
    elif name in NET_FETCHERS:
        rules_exec.fetcher(a, call)
    elif name in rules_remote.LAUNCHERS:
        rules_remote.launched(a, call)
    elif name in a.ctx.functions:
        rules_sys.call_function(a, call)
    if "/" in call.inv.argv0 and UNKNOWN not in call.inv.argv0 and name not in SHELLS and not interpreter(name):
        scripts.run_path(a, call)  # ./scripts/reset.sh, ./bin/install: what the file runs
    if name == "xargs-echo":
        return
