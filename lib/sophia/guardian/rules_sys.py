"""Disks, processes and the machine: dd/mkfs/wipefs/shred/blkdiscard, volumes and arrays (the DISKS
table), fork bombs, kill -1, history -c, crontab -r, power."""

from __future__ import annotations

import re

from . import packs, targets
from .lazyre import LazyRe
from .packs import Pack, rule
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


# Options that only read a partition table (sfdisk's dump, sgdisk's backup to a file or pretend mode);
# a call with nothing else writes nothing.
_TABLE_READS = {
    "sfdisk": ("-d", "--dump", "-J", "--json", "-l", "--list", "-s", "--show-size", "-g", "--show-geometry",
               "-F", "--list-free", "-V", "--verify"),
    "sgdisk": ("-b", "--backup", "-i", "--info", "-L", "--list-types", "-O", "--print-mbr", "-P", "--pretend"),
}


def partition(a: Analyzer, call: Call) -> None:
    args = call.args
    if not args or any(x in ("-l", "--list", "-p", "--print", "-h", "--help", "-V", "--version", "--verify",
                             "-v") for x in args) or "print" in args or _reads_table(call):
        return
    if call.name == "parted" and not any(x in args for x in ("rm", "mklabel", "mkpart", "resizepart", "mktable",
                                                                "-s", "--script")):
        a.add("ask", "disk", f"`{call.show()}` edits a partition table")
        return
    if call.name in ("fdisk", "cfdisk", "gdisk") and call.stdin.kind != "text":
        a.add("ask", "disk", f"`{call.show()}` opens a partition editor")
        return
    a.add("deny", "disk", f"`{call.show()}` rewrites a partition table", DISK_INSTEAD)


def _reads_table(call: Call) -> bool:
    """sfdisk/sgdisk with only read-only options (``sfdisk -d /dev/sda > table``, ``sgdisk --backup=f``)."""
    reads = _TABLE_READS.get(call.name)
    if not reads:
        return False
    opts = [x for x in call.args if x.startswith("-")]
    if call.name == "sgdisk" and any(x in ("-P", "--pretend") for x in opts):
        return True  # pretend mode: changes are shown, never saved
    return bool(opts) and all(x.split("=", 1)[0] in reads for x in opts)


def hdparm(a: Analyzer, call: Call) -> None:
    if any(x.startswith(("--security-erase", "--trim-sector", "--security-set-pass", "--sanitize",
                         "--write-sector", "--make-bad-sector")) for x in call.args):
        a.add("deny", "disk", f"`{call.show()}` erases or damages a drive", DISK_INSTEAD)


# Disks, volumes and arrays as data (:mod:`.packs`): erasing what a device holds denies; taking a volume
# or an array apart, or a delete whose data another copy may still hold, asks. What needs reasoning about
# the target (dd's of=, mkfs's device, shred's paths, a partition editor fed a script) stays code above.
_VOLUME_GONE = "removes a logical volume, volume group or physical volume, and the data on it"
DISKS: dict[str, Pack] = {
    "cryptsetup": Pack([
        rule("** luksformat|erase|lukserase|reencrypt|lukskillslot|luksheaderrestore", "deny",
             "destroys the data or keys of an encrypted volume"),
        rule("** luksremovekey", "ask", "removes a key of an encrypted volume (the last one locks the data away)"),
    ]),
    **dict.fromkeys(("lvremove", "vgremove", "pvremove"), Pack([rule("", "deny", _VOLUME_GONE)],
                                                              safe="-h --help -t --test")),
    "lvreduce": Pack([
        rule("", "deny", "shrinks a logical volume without its filesystem: data past the new end is lost",
             unless="-r --resizefs"),
        rule("", "ask", "shrinks a logical volume and its filesystem", opts="-r --resizefs"),
    ], safe="-h --help -t --test"),
    "zpool": Pack([rule("destroy|labelclear", "deny", "destroys a ZFS pool and every dataset in it")]),
    "vgreduce": Pack([rule("", "ask", "drops missing physical volumes from a volume group", opts="--removemissing"),
                      rule("", "deny", "drops missing physical volumes and every logical volume on them",
                           opts="--removemissing+--force --removemissing+-f")]),
    "pvcreate": Pack([rule("", "ask", "writes an LVM label over a device"),
                      rule("", "deny", "writes an LVM label over a device, forced past what it holds", opts="-ff")],
                     safe="-h --help -t --test"),
    "zfs": Pack([
        rule("destroy", "deny", "destroys a ZFS dataset or snapshot", unless="-n"),
        rule("rollback", "ask", "rolls a dataset back: every change since the snapshot (and, with -r, the later "
             "snapshots) is gone"),
    ]),
    "mdadm": Pack([
        rule("", "deny", "rewrites RAID metadata", opts="--zero-superblock --create -C"),
        rule("", "ask", "stops a RAID array or takes a disk out of it", opts="--stop -S --remove -r --fail -f "
             "--grow -G"),
    ], safe="-h --help -D --detail -E --examine -Q --query"),
    "btrfs": Pack([
        rule("sub* del*", "ask", "deletes a btrfs subvolume and every file in it"),
        rule("dev* del*|rem*", "ask", "removes a device from a btrfs filesystem"),
        rule("check", "deny", "repairs a btrfs filesystem in place (its own documentation warns it can make the "
             "damage worse)", opts="--repair --init-csum-tree --init-extent-tree"),
        rule("rescue zero-log|chunk-recover|super-recover", "ask", "rewrites btrfs metadata"),
    ]),
    "dmsetup": Pack([rule("remove|remove_all|wipe_table|clear|reload", "ask",
                          "removes or replaces a device-mapper table (what is mounted through it fails)")]),
    "nbd-client": Pack([rule("", "ask", "disconnects a network block device", opts="-d --disconnect")]),
    "badblocks": Pack([rule("", "deny", "runs a destructive write test that overwrites the whole device", opts="-w")]),
    "nvme": Pack([rule("format|sanitize|ns-delete|delete-ns|write-zeroes", "deny", "erases an NVMe drive or namespace")]),
    "sg_format": Pack([rule("", "deny", "low-level formats a drive")]),
    "xfs_repair": Pack([rule("", "ask", "zeroes the XFS log: the changes in it are lost", opts="-L", unless="-n")]),
    "diskutil": Pack([
        rule("** erasedisk|erasevolume|zerodisk|randomdisk|secureerase|partitiondisk|reformat|deletecontainer|"
             "deletevolume|erasecontainer", "deny", "erases a disk or volume"),
    ]),
}


def disk(a: Analyzer, call: Call) -> None:
    packs.judge(a, call, DISKS[call.name], "disk", DISK_INSTEAD)
    if call.name == "zpool":
        _pool_devices(a, call)


_VDEV = LazyRe(r"^(?:/dev/)?(?:sd[a-z]+\d*|hd[a-z]\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|da\d+|ada\d+|"
               r"disk\d+(?:s\d+)?)$|^/dev/disk/")


def _pool_devices(a: Analyzer, call: Call) -> None:
    """``zpool create|add|attach|replace`` onto a disk erases it (a file vdev in a temp folder does not)."""
    pos = [x for x in call.args if not x.startswith("-")]
    if pos[:1] in (["create"], ["add"], ["attach"], ["replace"]) and any(_VDEV.search(x) for x in pos[2:]):
        a.add("deny", "disk", f"`{call.show()}` puts a disk into a ZFS pool, erasing what it holds", DISK_INSTEAD)


def lvresize(a: Analyzer, call: Call) -> None:
    """``lvresize -L -10G``: a size that shrinks is lvreduce."""
    args = call.args
    for i, x in enumerate(args):
        size = args[i + 1] if x in ("-L", "--size", "-l", "--extents") and i + 1 < len(args) else (
            x[2:] if x[:2] in ("-L", "-l") and len(x) > 2 else x.split("=", 1)[1] if x.startswith(("--size=", "--extents=")) else "")
        if size.startswith("-"):
            packs.judge(a, call, DISKS["lvreduce"], "disk", DISK_INSTEAD)
            return


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
