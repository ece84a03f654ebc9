"""Where a path points, judged against what the guardian knows: the project, HOME, temp dirs.

Standard library only. Paths are resolved lexically (``..`` folded against the command's cwd);
nothing touches the filesystem, so a check costs microseconds and cannot hang on a dead mount.
"""

from __future__ import annotations

import os
import posixpath
import re

from .. import paths
from .lazyre import LazyRe
from .record import field, record
from .shell import UNKNOWN

# Top-level directories of the system. Anything under them (except temp dirs) is "system".
SYSTEM_TOP = frozenset({
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root", "run",
    "sbin", "srv", "sys", "usr", "var", "mnt", "media", "snap", "nix", "Applications", "Library", "System",
    "Users", "Volumes", "private", "cores", "lost+found",
})
# Writes here change how the machine boots or runs: always denied.
SYSTEM_WRITE_DENY = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/root",
                     "/var/spool/cron", "/proc", "/sys", "/System", "/Library", "/private/etc", "/var/lib",
                     "/var/log", "/opt")
# The machine's caches: what is inside can be deleted and is rebuilt (FHS: /var/cache; apt's package
# lists, which `apt update` downloads again). Deleting inside them is allowed; writing there is not.
SYSTEM_CACHES = ("/var/cache", "/var/lib/apt/lists", "/Library/Caches")
HARMLESS_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero",
                    "/dev/random", "/dev/urandom", "/dev/full", "/dev/ptmx")
_DISK_DEVICE = LazyRe(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|mapper/|dm-\d|md\d|loop\d|"
    r"sr\d|nbd\d|root|mtdblock|bcache|zd\d|rbd|ubi|block/|disk/)"
)

# The shell start-up files in HOME that new terminals run (appending inert settings: startup.py).
STARTUP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
                 ".zlogin", ".kshrc", ".mkshrc")
# Home entries whose loss or change compromises the user (credentials, shell start-up, the kit; Codex's
# hooks.json and config.toml hold its hooks, their trust and its MCP servers).
HOME_SENSITIVE = (
    ".ssh", ".aws", ".gnupg", ".gpg", ".kube", ".docker", ".azure", ".gcloud", ".config/gcloud", ".config/gh",
    ".password-store", ".local/share/keyrings", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
    *STARTUP_FILES, ".bash_logout", ".zlogout", ".cshrc", ".tcshrc", ".inputrc", ".config/fish",
    ".bash_history", ".zsh_history", ".history", ".sh_history", ".python_history", ".psql_history",
    ".mysql_history", ".node_repl_history", ".local/share/fish/fish_history",
    ".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json", ".codex/config.toml",
    ".config/autostart",
    "Library/LaunchAgents", ".config/systemd", ".pam_environment", ".xprofile", ".xinitrc", ".xsessionrc",
    ".vault-token", ".terraform.d/credentials.tfrc.json", ".cargo/credentials", ".cargo/credentials.toml",
    ".config/pip", ".m2/settings.xml", ".gem/credentials", ".ssh2", ".mozilla", ".thunderbird",
)
# The files Claude Code reads its project settings from (a copy beside them, e.g. a backup, is not one).
CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
# The user's own bin folders, slash commands, subagent prompts and skills: a new file there is fine,
# replacing an existing one is asked about, and so is a new program that would shadow one on PATH or a
# skill's SKILL.md (its !`cmd` lines run when Claude uses the skill, unasked).
HOME_PROGRAMS = ".local/bin"
HOME_BIN = (HOME_PROGRAMS, ".claude/commands", ".claude/agents", ".claude/skills")
# The machine's folders for locally installed programs: judged like the user's own bin folder.
SYSTEM_BIN = ("/usr/local/bin", "/opt/homebrew/bin")
# Under HOME but asked about rather than denied when written.
# (``.claude.json`` holds Claude Code's MCP servers and per-project state, not its hooks or credentials)
HOME_GREY_WRITE = (".gitconfig", ".config/git", ".claude.json",
                   ".claude/hooks", ".claude/plugins", ".claude/CLAUDE.md", ".bash_aliases", ".tmux.conf",
                   ".vimrc", ".config/nvim")
# Top-level folders of HOME that hold the user's work: deleting one is denied, not asked.
HOME_IMPORTANT = frozenset({"Documents", "Desktop", "Pictures", "Music", "Videos", "Movies", "Public", "Templates",
                            "projects", "Projects", "src", "code", "Code", "work", "Work", "dev", "Dev", "git", "repos",
                            "workspace", "Workspace", "go", "bin", "Dropbox", "OneDrive", "Google Drive", "Library",
                            "Applications", "Sites", "notes", "Notes", "Obsidian", "backup", "backups", "Backups",
                            "snap", "Zotero", "Calibre Library", "Mail", "data"})
# The user's cache folders (XDG's ~/.cache, macOS's ~/Library/Caches), the home's /var/cache: what is
# inside is rebuilt by the tool that put it there, so deleting inside them is allowed (the folders
# themselves are asked about, as home caches below).
HOME_CACHE_ROOTS = (".cache", "Library/Caches")
# Home children that are caches: deleting them is a grey zone, not a disaster.
HOME_CACHES = frozenset({".cache", ".npm", ".yarn", ".pnpm-store", ".gradle", ".m2", ".ivy2", ".nuget",
                         ".cargo", ".rustup", ".pyenv", ".nvm", ".bun", ".deno", ".expo", ".android",
                         ".cocoapods", ".pub-cache", ".conda", ".virtualenvs", ".local", "tmp", ".tmp",
                         "Downloads", ".Trash", ".vscode-server", ".cursor-server"})

SECRET_FILE = LazyRe(
    r"(?:^|/)(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|identity|\.env(?:\.[\w.-]+)?|credentials(?:\.json|\.csv)?|"
    r"[\w.-]+\.(?:pem|key|p12|pfx|jks|keystore|kdbx|gpg|asc|ovpn)|\.netrc|\.npmrc|\.pypirc|\.git-credentials|"
    r"secrets?(?:\.[\w]+)?|service[-_]account[\w.-]*\.json|\.vault-token|shadow|gshadow|master\.key|"
    r"hosts\.yml|config\.json|kubeconfig|\.pgpass|\.my\.cnf|token(?:s)?(?:\.json|\.txt)?|"
    r"[\w.-]*_history|private[\w.-]*)$"
)
_SECRET_DIRS = ("/.ssh/", "/.aws/", "/.gnupg/", "/.kube/", "/.docker/", "/.password-store/", "/.config/gh/",
                "/.azure/", "/.config/gcloud/")
_NOT_SECRET = LazyRe(r"(?:\.pub|known_hosts|\.env\.(?:example|sample|template|dist|defaults?))$")


@record
class Ctx:
    """What the analyzer knows while walking one command line."""

    cwd: str | None
    home: str
    project: str | None
    tmpdirs: tuple[str, ...] = ("/tmp", "/var/tmp")
    kit_dirs: tuple[str, ...] = ()
    sophia_home: str = ""
    vars: dict[str, str] = field(default_factory=dict)
    downloaded: set[str] = field(default_factory=set)
    functions: dict[str, int] = field(default_factory=dict)
    remote: bool = False

    def copy(self) -> Ctx:
        return Ctx(self.cwd, self.home, self.project, self.tmpdirs, self.kit_dirs, self.sophia_home,
                   dict(self.vars), set(self.downloaded), dict(self.functions), self.remote)


# Scratch places that count as temp folders: memory-backed /dev/shm, and the folders where Claude Code
# keeps a session's task lists, todos and shell snapshots (under HOME).
SCRATCH = ("/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm")
CLAUDE_SCRATCH = (".claude/tasks", ".claude/todos", ".claude/shell-snapshots")


def posix_path(p: str) -> str:
    """A Windows path (``C:\\Users\\x`` or ``C:/Users/x``, as Claude Code on Windows reports its cwd and
    agents write in Git Bash) in the ``/c/Users/x`` form Git Bash itself uses; other paths unchanged."""
    if len(p) > 2 and p[1] == ":" and p[2] in "\\/" and p[0].isascii() and p[0].isalpha():
        return "/" + p[0].lower() + "/" + p[3:].replace("\\", "/")
    return p


def make_ctx(cwd: str | None, env: dict[str, str]) -> Ctx:
    cwd = posix_path(cwd) if cwd else cwd
    home = posixpath.normpath(posix_path(env.get("HOME") or "/root"))
    tmp = [*SCRATCH, *(f"{home}/{d}" for d in CLAUDE_SCRATCH)]
    tmpdir = env.get("TMPDIR")
    if tmpdir and tmpdir.startswith("/") and posixpath.normpath(tmpdir) not in ("/", home):
        tmp.append(posixpath.normpath(tmpdir))
    cwd_n = posixpath.normpath(cwd) if cwd and cwd.startswith("/") else None
    proj_env = posix_path(env.get("CLAUDE_PROJECT_DIR") or "")
    project = None
    if proj_env and proj_env.startswith("/"):
        project = posixpath.normpath(proj_env)
        if cwd_n and not _under(cwd_n, project):
            project = cwd_n
    elif cwd_n:
        project = cwd_n
    if project in ("/", home) or (project and _under(home, project)):
        project = None  # a project that contains HOME is no project: judge every path on its own
    sh = paths.home_str(env)
    kit = []
    here = posixpath.dirname(posixpath.abspath(__file__))
    kit_root = posixpath.normpath(posixpath.join(here, "..", "..", ".."))
    if not (project and _under(kit_root, project)):
        kit.append(kit_root)
    plugin = env.get("CLAUDE_PLUGIN_ROOT")
    if plugin and plugin.startswith("/") and not (project and _under(plugin, project)):
        kit.append(posixpath.normpath(plugin))
    ctx = Ctx(cwd_n, home, project, tuple(tmp), tuple(kit), posixpath.normpath(sh))
    return ctx


def _under(path: str, root: str) -> bool:
    """path == root or path inside root."""
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def resolve(ctx: Ctx, p: str) -> str | None:
    """Absolute, lexically normalised path; None if it cannot be known (unknown start or cwd)."""
    if not p:
        return None
    if p.startswith(UNKNOWN):
        return None
    p = posix_path(p)
    if p.startswith("/"):
        full = p
    else:
        if ctx.cwd is None:
            return None
        full = posixpath.join(ctx.cwd, p)
    full = posixpath.normpath(full)
    if full.startswith("//"):
        full = "/" + full.lstrip("/")
    return full


def expand_tilde(ctx: Ctx, p: str) -> str:
    """``~`` or ``~/x`` as the user's home (paths taken from code or tool input, not shell words)."""
    return ctx.home + p[1:] if p.startswith("~") else p


def secret_at(ctx: Ctx, p: str) -> bool:
    """Whether the path ``p`` (relative to the cwd) names a credential or key file."""
    rp = resolve(ctx, p)
    return bool(rp and is_secret_path(rp))


def known_prefix(path: str) -> tuple[str, bool]:
    """Split at the first unknown or glob segment: (directory that is certainly targeted, wildcard?)."""
    segs = path.split("/")
    out: list[str] = []
    for s in segs:
        if UNKNOWN in s or any(ch in s for ch in "*?["):
            return ("/".join(out) or "/"), True
        out.append(s)
    return path, False


def home_rel(ctx: Ctx, path: str) -> str | None:
    if path == ctx.home:
        return ""
    if path.startswith(ctx.home + "/"):
        return path[len(ctx.home) + 1:]
    return None


def _rel_matches(rel: str, entries: tuple[str, ...]) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in entries)


def in_temp(ctx: Ctx, path: str) -> str | None:
    """'inside' (strictly inside a temp dir), 'root' (a temp dir itself) or None.

    A home inside a temp folder (``HOME=/tmp/...``, as containers and CI often have) is a home: its paths
    are judged by the home's rules (credentials, start-up files, its top folders), not as scratch, except
    inside a temp folder of its own (Claude Code's task folders, a ``TMPDIR`` under it)."""
    best = ""
    for t in ctx.tmpdirs:
        if path == t:
            return "root"
        if path.startswith(t + "/") and len(t) > len(best):
            best = t
    if not best:
        return None
    if ctx.home.startswith(best + "/") and _under(path, ctx.home):
        return None
    return "inside"


def is_disk_device(path: str) -> bool:
    return bool(_DISK_DEVICE.match(path))


def is_secret_path(path: str) -> bool:
    if _NOT_SECRET.search(path):
        return False
    if any(d in path + "/" for d in _SECRET_DIRS) and not path.endswith("/config"):
        return True
    if path.endswith("/.ssh/config") or path.endswith("/.docker/config.json") or path.endswith("/.kube/config"):
        return True
    base = path.rsplit("/", 1)[-1]
    if base in ("config.json", "hosts.yml") and not any(d in path for d in ("/.docker/", "/.config/gh/")):
        return False
    if re.match(r"(?:secrets?|token|tokens)(?:\.\w+)?$", base) and base.endswith((".py", ".ts", ".js", ".go", ".rb", ".md")):
        return False
    return bool(SECRET_FILE.search(path))


@record
class Zone:
    """Where a target lies. ``kind`` is one of: root, system, home, home_sensitive, home_top,
    home_cache, home_other, project_root, project_ancestor, project_git, project, temp_root, temp,
    elsewhere_top, elsewhere, kit, unknown."""

    kind: str
    path: str


def zone(ctx: Ctx, path: str | None, *, contents: bool = False) -> Zone:
    """Classify ``path`` (already resolved). ``contents``: the target is everything inside ``path``."""
    if path is None:
        return Zone("unknown", "?")
    kind = (_fixed_zone(ctx, path) or _project_zone(ctx, path) or _TEMP_ZONES.get(in_temp(ctx, path), "")
            or _home_zone(ctx, path) or _elsewhere_zone(path))
    return Zone(kind, path)


def _fixed_zone(ctx: Ctx, path: str) -> str:
    """The filesystem root, the kit's own files, and HOME itself or a directory above it."""
    if path == "/":
        return "root"
    if any(_under(path, k) for k in ctx.kit_dirs) or _kit_state(ctx, path):
        return "kit"
    if path == ctx.home or _under(ctx.home, path):
        return "home"
    return ""


def _kit_state(ctx: Ctx, path: str) -> bool:
    """The kit's own config, hooks, guardian log, code and self-model (the creed) inside the Sophia home."""
    for sh in {ctx.sophia_home, ctx.home + "/.sophia"}:
        if sh and _under(path, sh):
            rel = path[len(sh):].lstrip("/")
            if rel == "" or rel.startswith(("config.json", "self_model.json", "hooks", "logs/guardian", "lib", "bin", "venv", "kit")):
                return True
    return False


def _project_zone(ctx: Ctx, path: str) -> str:
    if not ctx.project:
        return ""
    if path == ctx.project:
        return "project_root"
    if _under(ctx.project, path):
        return "project_ancestor"
    if not path.startswith(ctx.project + "/"):
        return ""
    rel = path[len(ctx.project) + 1:]
    if rel == ".git" or rel.startswith(".git/objects") or rel == ".git/refs":
        return "project_git"
    return "project"


_TEMP_ZONES: dict[str | None, str] = {"inside": "temp", "root": "temp_root"}


def _home_zone(ctx: Ctx, path: str) -> str:
    """A path inside HOME (HOME itself and its ancestors are a _fixed_zone)."""
    rel = home_rel(ctx, path)
    if not rel:
        return ""
    if _rel_matches(rel, HOME_SENSITIVE):
        return "home_sensitive"
    if "/" in rel:
        return "home_other"
    if rel in HOME_CACHES:
        return "home_cache"
    if rel.startswith(".") or rel in HOME_IMPORTANT:
        return "home_top"
    return "home_other"


def _elsewhere_zone(path: str) -> str:
    if path.split("/")[1] in SYSTEM_TOP:
        return "system"
    if path.count("/") == 1:
        return "elsewhere_top"
    return "elsewhere"


def in_cache(ctx: Ctx, path: str) -> bool:
    """Strictly inside one of the machine's caches (SYSTEM_CACHES) or the user's (HOME_CACHE_ROOTS)."""
    if any(path.startswith(c + "/") for c in SYSTEM_CACHES):
        return True
    rel = home_rel(ctx, path) or ""
    return any(rel.startswith(c + "/") for c in HOME_CACHE_ROOTS) and _fixed_zone(ctx, path) != "kit"


def system_write_denied(path: str) -> bool:
    return any(_under(path, p) for p in SYSTEM_WRITE_DENY)


def team_memory(ctx: Ctx, path: str, holding: bool = False) -> bool:
    """``path`` lies in a repository's team memory (``<repo>/.sophia/team``, ``paths.TEAM_FOLDER``), which
    people change through review; the kit's own state home (``~/.sophia/team`` keeps a team database's
    settings) is not one. ``holding``: also a folder of the project that holds its team memory (a delete
    of ``.sophia``)."""
    marker = "/" + paths.TEAM_FOLDER
    if path.endswith(marker) or marker + "/" in path:
        return not any(sh and _under(path, sh) for sh in {ctx.sophia_home, ctx.home + "/.sophia"})
    return bool(holding and ctx.project and path != ctx.project and path.startswith(ctx.project + "/")
                and _under(ctx.project + marker, path))


def write_level(ctx: Ctx, path: str | None, existing: bool = False) -> tuple[str, str] | None:
    """(level, why) for writing/replacing ``path``; None if harmless. ``existing``: the file is there."""
    if path is None:
        return None
    if path.startswith("/dev/"):
        return _device_write(path)
    z = zone(ctx, path)
    guarded = _guarded_write(ctx, z.kind, path)
    if guarded:
        return guarded
    if z.kind in ("project", "temp", "project_git") or z.kind.startswith("project"):
        if ctx.project and _rel_grey_project(ctx, path):
            return ("ask", f"changes the project's Claude Code settings ({path}), which can disable hooks")
        return None
    if z.kind in ("system", "root"):
        if path in SYSTEM_BIN or posixpath.dirname(path) in SYSTEM_BIN:
            return None if path in SYSTEM_BIN else _own_file_write(path, "", existing, program=True)
        if system_write_denied(path) or path == "/":
            return ("deny", f"writes to the system path {path}")
        return ("ask", f"writes outside your home and project ({path})")
    rel = home_rel(ctx, path)
    if rel is not None and _rel_matches(rel, HOME_GREY_WRITE):
        return ("ask", f"changes {path}, which configures your tools")
    if rel is not None and rel not in HOME_BIN and _rel_matches(rel, HOME_BIN):
        return _own_file_write(path, rel, existing, program=_rel_matches(rel, (HOME_PROGRAMS,)))
    return None


def _guarded_write(ctx: Ctx, kind: str, path: str) -> tuple[str, str] | None:
    """Places guarded wherever they lie: the kit, credentials and start-up files, the team's memory."""
    if kind == "kit":
        return ("deny", f"modifies the Sophia kit's own hooks or config ({path})")
    if kind == "home_sensitive":
        return ("deny", f"modifies {path}, a credential, shell start-up or settings file")
    if team_memory(ctx, path):
        return ("ask", f"writes into the team's shared memory ({path}), which people change through review")
    return None


def is_bin_folder(ctx: Ctx, path: str) -> bool:
    """A folder that holds the user's own programs, commands, agents or skills (judged file by file)."""
    return path in SYSTEM_BIN or home_rel(ctx, path) in HOME_BIN


def _own_file_write(path: str, rel: str, existing: bool, program: bool) -> tuple[str, str] | None:
    """A file in one of the user's own folders (HOME_BIN with ``rel`` its place under HOME, or SYSTEM_BIN);
    ``program``: a folder on PATH, where a new name may shadow another program."""
    if rel.startswith(".claude/skills/") and (posixpath.basename(path) == "SKILL.md" or rel.count("/") == 2):
        return ("ask", f"changes {path}, a skill Claude may use on its own (its !`cmd` lines run unasked)")
    if existing or os.path.lexists(path):
        return ("ask", f"replaces {path}, an existing program or file of yours")
    other = _shadowed(path) if program else None
    if other:
        return ("ask", f"puts a program at {path} that would shadow {other} on PATH")
    return None


def _shadowed(path: str) -> str | None:
    """The program elsewhere on PATH that a new program at ``path`` would hide (or be hidden by), if any."""
    name, here = posixpath.basename(path), posixpath.dirname(path)
    for d in os.environ.get("PATH", os.defpath).split(":"):
        if d.startswith("/") and posixpath.normpath(d) != here and os.path.exists(posixpath.join(d, name)):
            return posixpath.join(d, name)
    return None


def _device_write(path: str) -> tuple[str, str] | None:
    """(level, why) for writing to a path under /dev."""
    if any(path == d for d in HARMLESS_DEVICES) or path.startswith(("/dev/fd/", "/dev/pts/", "/dev/shm/")):
        return None
    if is_disk_device(path):
        return ("deny", f"writes raw data onto the disk device {path}")
    if path.startswith("/dev/tcp/") or path.startswith("/dev/udp/"):
        return None  # network: judged by the exfiltration rules
    return ("ask", f"writes to the device {path}")


def _rel_grey_project(ctx: Ctx, path: str) -> bool:
    assert ctx.project
    rel = path[len(ctx.project) + 1:]
    return rel in CLAUDE_SETTINGS or (rel.startswith(".claude/") and "hooks" in rel)
