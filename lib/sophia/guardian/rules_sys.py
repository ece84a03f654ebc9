"""Disks, processes and the machine: dd/mkfs/wipefs/shred/blkdiscard, fork bombs, kill -1, history -c,
crontab -r, power."""

from __future__ import annotations

import re

from . import targets
from .lazyre import LazyRe
from .shell import Command, Script

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

DISK_INSTEAD = "Never touch disk devices from here; use an image file and ask the user to run device commands."


def _device(a: Analyzer, p: str) -> str | None:
    rp = targets.resolve(a.ctx, p) if p else None
    if rp and targets.is_disk_device(rp):
        return rp
    return None


def dd(a: Analyzer, call: Call) -> None:
    from .rules_fs import judge_write

    for x in call.args:
        if x.startswith("of="):
            dest = x[3:]
            dev = _device(a, dest)
            if dev:
                a.add("deny", "disk", f"`{call.show()}` overwrites the disk device {dev}", DISK_INSTEAD)
            else:
                judge_write(a, dest, f"`{call.show()}`")


def mkfs(a: Analyzer, call: Call) -> None:
    pos = [x for x in call.args if not x.startswith("-")]
    if any(x in ("-V", "--version", "-h", "--help") for x in call.args) and not pos:
        return
    tgt = pos[-1] if pos else ""
    if len(pos) >= 2 and pos[-1].isdigit():
        tgt = pos[-2]
    rp = targets.resolve(a.ctx, tgt) if tgt else None
    if rp:
        z = targets.zone(a.ctx, rp)
        if z.kind in ("project", "temp") and not rp.startswith("/dev/"):
            return
    a.add("deny", "disk", f"`{call.show()}` creates a new filesystem, erasing {tgt or 'a device'}", DISK_INSTEAD)


def wipefs(a: Analyzer, call: Call) -> None:
    destructive = any(x in ("--all", "--offset", "--force") or re.match(r"^-[a-zA-Z]*[ao]", x) for x in call.args)
    if destructive and "--no-act" not in call.args and not any(re.match(r"^-[a-zA-Z]*n", x) for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` erases filesystem signatures", DISK_INSTEAD)


def blkdiscard(a: Analyzer, call: Call) -> None:
    if any(x in ("-h", "--help", "-V", "--version") for x in call.args):
        return
    a.add("deny", "disk", f"`{call.show()}` discards every block of a device", DISK_INSTEAD)


def shred(a: Analyzer, call: Call) -> None:
    pos = [x for x in call.args if not x.startswith("-")]
    via = f"`{call.show()}`"
    for p in pos:
        rp = targets.resolve(a.ctx, p)
        if rp is None:
            a.add("ask", "disk", f"{via} shreds a path only known at run time")
            continue
        if rp.startswith("/dev/"):
            if rp in targets.HARMLESS_DEVICES:
                continue
            a.add("deny", "disk", f"{via} overwrites the device {rp}", DISK_INSTEAD)
            continue
        z = targets.zone(a.ctx, rp)
        if z.kind in ("project", "temp"):
            continue
        if z.kind in ("home_sensitive", "kit", "system", "root", "home", "project_root", "project_git"):
            a.add("deny", "disk", f"{via} irrecoverably destroys {rp}", "Leave it alone.")
        else:
            a.add("ask", "disk", f"{via} irrecoverably destroys {rp} outside the project")


def partition(a: Analyzer, call: Call) -> None:
    args = call.args
    if not args or any(x in ("-l", "--list", "-p", "--print", "-h", "--help", "-V", "--version", "--verify",
                             "-v") for x in args) or "print" in args:
        return
    if call.name == "parted" and not any(x in args for x in ("rm", "mklabel", "mkpart", "resizepart", "mktable",
                                                                "-s", "--script")):
        a.add("ask", "disk", f"`{call.show()}` edits a partition table")
        return
    if call.name in ("fdisk", "cfdisk", "gdisk") and call.stdin.kind != "text":
        a.add("ask", "disk", f"`{call.show()}` opens a partition editor")
        return
    a.add("deny", "disk", f"`{call.show()}` rewrites a partition table", DISK_INSTEAD)


def hdparm(a: Analyzer, call: Call) -> None:
    if any(x.startswith(("--security-erase", "--trim-sector", "--security-set-pass", "--sanitize",
                         "--write-sector", "--make-bad-sector")) for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` erases or damages a drive", DISK_INSTEAD)


def cryptsetup(a: Analyzer, call: Call) -> None:
    if any(x in ("luksFormat", "erase", "luksErase", "reencrypt", "luksKillSlot") for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` destroys the data or keys of an encrypted volume", DISK_INSTEAD)


def volume(a: Analyzer, call: Call) -> None:
    a.add("deny", "disk", f"`{call.show()}` removes a logical volume/group", DISK_INSTEAD)


def zfs(a: Analyzer, call: Call) -> None:
    if any(x in ("destroy", "labelclear") for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` destroys a ZFS pool or dataset", DISK_INSTEAD)


def mdadm(a: Analyzer, call: Call) -> None:
    if any(x in ("--zero-superblock", "--create", "-C") for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` rewrites RAID metadata", DISK_INSTEAD)


def diskutil(a: Analyzer, call: Call) -> None:
    if any(x in ("eraseDisk", "eraseVolume", "zeroDisk", "randomDisk", "secureErase", "partitionDisk",
                 "reformat") for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` erases a disk", DISK_INSTEAD)


# -- fork bombs --------------------------------------------------------------------------------


def fork_bombs(a: Analyzer, sc: Script) -> None:
    cmds = sc.commands
    for i, c in enumerate(cmds):
        if not c.funcdef:
            continue
        name = c.funcdef
        body: list[Command] = []
        for d in cmds[i + 1:]:
            if d.depth <= c.depth and body:
                break
            if d.depth > c.depth:
                body.append(d)
        calls = [d for d in body if d.words and (d.words[0].literal() or "") == name]
        if not calls:
            continue
        piped = any(len(sc.pipeline_of(d)) > 1 or d.background for d in calls)
        if len(calls) >= 2 and piped or any(d.background for d in calls):
            a.ctx.functions[name] = 1
            rest = cmds[i + 1 + len(body):]
            runs = any(d.words and (d.words[0].literal() or "") == name for d in rest)
            if runs:
                a.add("deny", "forkbomb", f"this defines and runs `{name}`, a function that forks itself without "
                      "end (a fork bomb)", "Do not run it; it freezes the machine.")
            else:
                a.add("ask", "forkbomb", f"this defines `{name}`, a self-forking function (a fork bomb)")


def call_function(a: Analyzer, call: Call) -> None:
    """Calls of a fork-bomb function defined earlier are reported by fork_bombs."""


# -- processes ---------------------------------------------------------------------------------

_SIG = LazyRe(r"^-(?:\d+|[A-Z]+[A-Z0-9+-]*|SIG\w+)$", re.I)


def kill(a: Analyzer, call: Call) -> None:
    args = call.args
    if any(x in ("-l", "-L", "--list", "--table") for x in args):
        return
    sig_seen = False
    pids: list[str] = []
    i = 0
    end = False
    while i < len(args):
        x = args[i]
        if not end and x == "--":
            end = True
        elif not end and x in ("-s", "-n", "--signal") and i + 1 < len(args):
            sig_seen = True
            i += 1
        elif not end and not sig_seen and _SIG.match(x):
            sig_seen = True
        else:
            pids.append(x)
        i += 1
    if "-1" in pids:
        a.add("deny", "kill_all", f"`{call.show()}` signals every process you can reach (pid -1)",
              "Kill the specific process id instead.")
    elif "1" in pids:
        a.add("deny", "kill_all", f"`{call.show()}` signals init (pid 1)", "Kill the specific process id instead.")
    elif "0" in pids and sig_seen:
        a.add("ask", "kill_all", f"`{call.show()}` signals the whole process group")


def pkill(a: Analyzer, call: Call) -> None:
    args = call.args
    pos = []
    skip = False
    for x in args:
        if skip:
            skip = False
        elif x in ("-u", "-U", "-g", "-G", "-s", "-P", "-t", "--signal", "--euid", "--uid", "--group", "--parent",
                   "--session", "--terminal", "--user"):
            skip = True
        elif not x.startswith("-"):
            pos.append(x)
    if any(x in (".", ".*", "^", "''", "") for x in pos) or (not pos and any(x in ("-u", "--user", "-U") for x in args)):
        a.add("deny", "kill_all", f"`{call.show()}` kills every matching process of a user",
              "Name the specific process.")
    elif any(x in ("-u", "--user", "-U") for x in args) and call.name == "killall":
        a.add("ask", "kill_all", f"`{call.show()}` kills processes of a whole user")


def killall5(a: Analyzer, call: Call) -> None:
    a.add("deny", "kill_all", f"`{call.show()}` kills every process on the system", "Kill specific processes.")


def history(a: Analyzer, call: Call) -> None:
    if any(re.match(r"^-[a-zA-Z]*c", x) for x in call.args):
        a.add("deny", "history_clear", f"`{call.show()}` erases the shell history",
              "Leave the history alone; it is the user's record.")


def crontab(a: Analyzer, call: Call) -> None:
    args = call.args
    if any(re.match(r"^-[a-zA-Z]*r", x) or x == "--remove" for x in args):
        a.add("deny", "crontab", f"`{call.show()}` deletes every cron job of the user",
              "Edit the one entry that needs to change (crontab -l > file, edit, review with the user).")
    elif any(x in ("-l", "--list") for x in args):
        return
    elif "-e" in args or any(not x.startswith("-") or x == "-" for x in args):
        a.add("ask", "crontab", f"`{call.show()}` replaces the user's crontab")


def power(a: Analyzer, call: Call) -> None:
    if call.name in ("init", "telinit") and not any(x in ("0", "6") for x in call.args):
        return
    if any(x in ("-h", "--help", "--version") for x in call.args) and call.name not in ("shutdown",):
        return
    a.add("ask", "power", f"`{call.show()}` shuts down or restarts the machine")


def systemctl(a: Analyzer, call: Call) -> None:
    if any(x in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency")
           for x in call.args):
        a.add("ask", "power", f"`{call.show()}` shuts down or restarts the machine")
