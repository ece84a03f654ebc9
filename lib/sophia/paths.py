"""Where the state lives. Standard library only, and nothing but ``os`` and ``sys`` at import: the
guardian imports it on every analysed tool call (``pathlib`` costs it ~5 ms, so it is imported lazily).

``home_str()`` is the one place that decides the state location (``sophia_home()`` is the same as a
``Path``); every other path is derived from it. The order:

1. ``$SOPHIA_HOME``;
2. the ``.sophia_home`` file an install with a non-default home leaves in the folders it runs code
   from: the kit (``kit/.sophia_home``, two levels above this file) and the venv it created
   (``venv/.sophia_home``). Claude Code runs hooks without our environment, and a user may run the
   venv's ``s3`` directly, so the install says where its home is;
3. ``~/.sophia``.

``hooks/lib/env.sh`` resolves it the same way for the shell hooks (and exports it for this module).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

MARKER = ".sophia_home"
_marker_home: list[str] = []  # memo of the marker lookup: [] not looked up yet, [""] none found


def install_roots() -> list[str]:
    """The folders an install runs our code from: the kit (or checkout) holding lib/sophia, and the
    venv this interpreter runs in (when it is one)."""
    roots = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
    if sys.prefix != sys.base_prefix:
        roots.append(sys.prefix)
    return roots


def _marked_home() -> str:
    if not _marker_home:
        found = ""
        for root in install_roots():
            try:
                with open(os.path.join(root, MARKER), encoding="utf-8") as fh:
                    found = fh.readline().rstrip("\n")
            except (OSError, UnicodeDecodeError):
                continue
            if found:
                break
        _marker_home.append(found)
    return _marker_home[0]


def home_str(env: Mapping[str, str] | None = None) -> str:
    """The state folder as a string (see the module doc for the order). ``env`` defaults to
    ``os.environ``."""
    e = os.environ if env is None else env
    explicit = e.get("SOPHIA_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    marked = _marked_home()
    if marked:
        return marked
    return os.path.join(e.get("HOME") or os.path.expanduser("~"), ".sophia")


def sophia_home(env: Mapping[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(home_str(env))


def config_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "config.json"


def self_model_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "self_model.json"


def user_model_path(user_id: str = "default", home: Path | None = None) -> Path:
    return (home or sophia_home()) / "user_models" / f"{user_id}.json"


def episodes_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "episodes"


def episode_index_path(home: Path | None = None) -> Path:
    return episodes_dir(home) / "index.json"


def rules_path(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "semantic_rules.json"


def agent_results_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "agent_results"


def logs_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "logs"


def capability_history_path(home: Path | None = None) -> Path:
    """One line per applied capability change (reflection): what the self-model keeps only as 'now'."""
    return logs_dir(home) / "capabilities.jsonl"


def buffers_dir(home: Path | None = None) -> Path:
    """Per-session action buffers (PostToolUse), private to the user."""
    return (home or sophia_home()) / "buffers"


def memory_dir(home: Path | None = None) -> Path:
    """Extracted memories (facts, foresight, profile, scenes, links...), one JSON file per kind."""
    return (home or sophia_home()) / "memory"


def quarantine_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "quarantine"


def backups_dir(home: Path | None = None) -> Path:
    return (home or sophia_home()) / "backups"


def index_db_path(home: Path | None = None) -> Path:
    """The derived SQLite index (rebuildable from the files)."""
    return (home or sophia_home()) / "index.db"


def run_dir(home: Path | None = None) -> Path:
    """Sockets and pidfiles of background helpers (embedding service, reflection)."""
    return (home or sophia_home()) / "run"


def list_output_path(word: str, json_out: bool, home: Path | None = None) -> Path:
    """What the last ``s3 list WORD`` printed (``--json``: its JSON), kept for the next one
    (``cli/list_cache.py``); the store's writers remove it."""
    return run_dir(home) / f"list_{word}.{'json' if json_out else 'txt'}"


def shown_dir(home: Path | None = None) -> Path:
    """One small file per live session: the ids of the memories already injected into its context
    (``hooks/shown.py``)."""
    return run_dir(home) / "shown"


def shown_path(home: Path, session: str) -> Path:
    """``session``'s record in ``shown_dir``; ``session`` must already be a safe file name
    (``hooks.runtime.safe_session``)."""
    return shown_dir(home) / f"{session}.json"


def command_counts_path(home: Path | None = None) -> Path:
    """The zero-token learners' cross-session counts of commands and failures (``learning/learners.py``)."""
    return (home or sophia_home()) / "learning" / "commands.json"


TREE_DIRS = ("user_models", "episodes", "agent_results", "logs", "buffers", "memory", "run")


def identity_record_path(home: Path | None = None) -> Path:
    """Where ``s3 refresh-identity`` records which CLAUDE.md it wrote and when."""
    return (home or sophia_home()) / "identity.json"


# A project's team memory: one Markdown file per shared item, kept in the repository and reviewed like
# code (written by ``s3 team share``, sophia.team.repo; indexed read-only by sophia.memory.team_repo;
# the guardian asks before an agent writes there, sophia.guardian.targets).
TEAM_FOLDER = ".sophia/team"


def team_folder(project: str) -> str:
    """``<project>/.sophia/team``: where a project's team memory lives."""
    return os.path.join(project, TEAM_FOLDER)
