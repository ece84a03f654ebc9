"""The ``~/.sophia`` state tree: create it, read and write its files through their models,
check and repair it. Imports pydantic (CLI side only; hooks use the stdlib modules).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from . import paths
from .atomic import DIR_MODE, FILE_MODE, ensure_dir, read_json, write_json_atomic
from .episode_store import empty_index
from .errors import StateFileError
from .locking import locked
from .models import Config, Episode, EpisodeIndex, SelfModel, SemanticRule, UserModel
from .problem import Problem
from .timeutil import now

M = TypeVar("M", bound=BaseModel)
TEMPLATES = Path(__file__).with_name("templates")


def template_json(name: str) -> Any:
    return json.loads((TEMPLATES / name).read_text(encoding="utf-8"))


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(root)"
        msg = str(err.get("msg"))
        if err.get("type") == "value_error":  # config_defaults.check's lines name their keys
            msg = msg.removeprefix("Value error, ")
            loc = "" if loc == "(root)" else loc
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "; ".join(parts) + more


def load_model(path: Path, model: type[M], default: Callable[[], M] | None = None) -> M:
    """Read ``path`` as ``model``. Missing -> ``default()``; bad JSON or schema -> StateFileError."""
    data = read_json(path, default=None)
    if data is None:
        if default is None:
            raise StateFileError(path, "missing")
        return default()
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise StateFileError(path, f"does not match the {model.__name__} schema: {describe_validation(exc)}") from exc


def last_good_path(path: Path, home: Path | None = None) -> Path:
    h = home or paths.sophia_home()
    try:
        rel = path.relative_to(h)
    except ValueError:
        rel = Path(path.name)
    return paths.backups_dir(h) / "last" / rel


def save_model(path: Path, obj: BaseModel, home: Path | None = None) -> None:
    write_json_atomic(path, obj.model_dump(mode="json"), keep_last=last_good_path(path, home))


@contextlib.contextmanager
def update_model(path: Path, model: type[M], default: Callable[[], M] | None = None,
                 home: Path | None = None) -> Iterator[M]:
    """Lock, read, let the caller mutate, write atomically. Nothing is written if the block raises."""
    with locked(path):
        obj = load_model(path, model, default)
        yield obj
        save_model(path, obj, home)


# ---------------------------------------------------------------- the tree


@dataclass(frozen=True)
class StateFile:
    name: str
    path: Callable[[Path], Path]
    model: type[BaseModel] | None  # None: a JSON list of SemanticRule
    default: Callable[[], Any]


def _default_config() -> Config:
    return Config.model_validate(template_json("config.json"))


def _default_self_model() -> SelfModel:
    data = template_json("self_model.json")
    stamp = now()
    data.setdefault("created_at", stamp)
    data.setdefault("updated_at", stamp)
    return SelfModel.model_validate(data)


def state_files(home: Path) -> list[StateFile]:
    user = "default"
    with contextlib.suppress(Exception):
        cfg = read_json(paths.config_path(home), default=None)
        if isinstance(cfg, dict) and isinstance(cfg.get("current_user"), str) and "/" not in cfg["current_user"]:
            user = cfg["current_user"] or "default"
    return [
        StateFile("config.json", paths.config_path, Config, _default_config),
        StateFile("self_model.json", paths.self_model_path, SelfModel, _default_self_model),
        StateFile(f"user_models/{user}.json", lambda h: paths.user_model_path(user, h), UserModel,
                  lambda: UserModel(user_id=user)),
        StateFile("episodes/index.json", paths.episode_index_path, EpisodeIndex,
                  lambda: EpisodeIndex.model_validate(empty_index())),
        StateFile("semantic_rules.json", paths.rules_path, None, list),
    ]


def validate_data(sf: StateFile, data: Any, path: Path) -> None:
    if sf.model is not None:
        try:
            sf.model.model_validate(data)
        except ValidationError as exc:
            raise StateFileError(path, f"does not match the {sf.model.__name__} schema: "
                                       f"{describe_validation(exc)}") from exc
        return
    if not isinstance(data, list):
        raise StateFileError(path, "expected a JSON array of semantic rules")
    for i, item in enumerate(data):
        try:
            SemanticRule.model_validate(item)
        except ValidationError as exc:
            raise StateFileError(path, f"rule #{i}: {describe_validation(exc)}") from exc


def _dump_default(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def init_tree(home: Path | None = None, notes: list[str] | None = None) -> list[str]:
    """Create whatever is missing (idempotent) and migrate an older tree. Returns the relative
    paths created; what a migration changed that the user should know goes to ``notes``."""
    h = home or paths.sophia_home()
    created: list[str] = []
    if not h.exists():
        created.append(".")
    ensure_dir(h)
    with contextlib.suppress(OSError):
        os.chmod(h, DIR_MODE)
    for d in paths.TREE_DIRS:
        p = h / d
        if not p.exists():
            created.append(d + "/")
        ensure_dir(p)
    from .migrations import migrate

    migrate(h, notes)
    for sf in state_files(h):
        p = sf.path(h)
        with locked(p):
            if p.exists():
                continue
            write_json_atomic(p, _dump_default(sf.default()), keep_last=last_good_path(p, h))
            created.append(sf.name)
    return created


def secure_tree(home: Path) -> None:
    """Directories 0700, files 0600, executables 0700 (the installed hooks in kit/) (best effort)."""
    for root, dirs, files in os.walk(home):
        if Path(root).name == "venv" or "/venv/" in root:
            dirs[:] = []
            continue
        for d in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, d), DIR_MODE)
        for f in files:
            fp = os.path.join(root, f)
            with contextlib.suppress(OSError):
                if not os.path.islink(fp):
                    executable = os.stat(fp).st_mode & stat.S_IXUSR
                    os.chmod(fp, DIR_MODE if executable else FILE_MODE)


# ---------------------------------------------------------------- doctor


def _check_file(sf: StateFile | None, p: Path, model: type[BaseModel] | None = None) -> Problem | None:
    try:
        data = read_json(p, default=None)
        if data is None:
            return Problem(p, "contains JSON null, expected a state object" if p.exists() else "missing")
        if sf is not None:
            validate_data(sf, data, p)
        elif model is not None:
            try:
                model.model_validate(data)
            except ValidationError as exc:
                raise StateFileError(p, f"does not match the {model.__name__} schema: "
                                        f"{describe_validation(exc)}") from exc
    except StateFileError as exc:
        return Problem(p, exc.reason)
    return None


def check_tree(home: Path | None = None, extras: bool = True) -> list[Problem]:
    """Every problem in the tree; ``extras=False`` leaves out the registered checkers' stores."""
    h = home or paths.sophia_home()
    if not h.is_dir():
        return [Problem(h, "missing: run `s3 init`")]
    problems = _check_state_files(h)
    if extras:
        for checker in _extra_checkers:
            problems.extend(checker(h, False))
    return problems


def _check_state_files(h: Path) -> list[Problem]:
    """The JSON state files only (registered checkers repair their own stores)."""
    from .migrations import CURRENT, _vt, tree_version

    problems: list[Problem] = []
    try:
        version = tree_version(h)
    except StateFileError:  # a corrupt config.json is reported below
        version = None
    outdated = version is not None and _vt(version) < _vt(CURRENT)
    if outdated:  # its files follow an older schema: migrate, do not judge them by this one
        problems.append(Problem(paths.config_path(h), f"the state tree is at schema {version}, this kit at "
                                f"{CURRENT}: run `s3 init` to migrate it (a backup is kept)"))
    for sf in state_files(h):
        prob = None if outdated and sf.model is Config else _check_file(sf, sf.path(h))
        if prob:
            problems.append(prob)
    ed = paths.episodes_dir(h)
    if ed.is_dir():
        for p in sorted(ed.glob("*.json")):
            if p.name == "index.json" or p.name.startswith("index_archive_"):
                if p.name.startswith("index_archive_"):
                    prob = _check_file(None, p)
                    if prob:
                        problems.append(prob)
                continue
            prob = _check_file(None, p, Episode)
            if prob:
                problems.append(prob)
    return problems


# Other modules (the index, memory stores) register checks: fn(home, repair) -> problems.
_extra_checkers: list[Callable[[Path, bool], list[Problem]]] = []


def register_checker(fn: Callable[[Path, bool], list[Problem]]) -> None:
    if fn not in _extra_checkers:
        _extra_checkers.append(fn)


def quarantine(p: Path, home: Path) -> Path:
    qdir = paths.quarantine_dir(home)
    ensure_dir(qdir)
    stamp = now().strftime("%Y%m%dT%H%M%S%f")
    rel = str(p.relative_to(home)).replace(os.sep, "__") if p.is_relative_to(home) else p.name
    dest = qdir / f"{stamp}-{rel}"
    shutil.move(str(p), dest)
    with contextlib.suppress(OSError):
        os.chmod(dest, FILE_MODE)
    return dest


def repair_tree(home: Path | None = None) -> list[Problem]:
    """Quarantine every corrupt file and restore its last good copy or the default."""
    from .migrations import migrate

    h = home or paths.sophia_home()
    init_needed = not h.is_dir()
    if init_needed:
        init_tree(h)
    with contextlib.suppress(StateFileError):  # a corrupt config.json is set aside below
        migrate(h)  # an older tree is migrated, never quarantined for following its own schema
    fixed: list[Problem] = []
    by_path = {sf.path(h): sf for sf in state_files(h)}
    for prob in _check_state_files(h):
        p = prob.path
        sf = by_path.get(p)
        with locked(p):
            if sf is not None and sf.model is Config and _repair_config(p, h, prob):
                fixed.append(prob)
                continue
            if p.exists():
                dest = quarantine(p, h)
                prob.action = f"moved to {dest}"
            else:
                prob.action = ""
            restored = False
            lg = last_good_path(p, h)
            if lg.exists():
                try:
                    data = read_json(lg)
                    if sf is not None:
                        validate_data(sf, data, lg)
                    elif p.parent == paths.episodes_dir(h) and not p.name.startswith("index_archive_"):
                        Episode.model_validate(data)
                    write_json_atomic(p, data)
                    prob.action += ("; " if prob.action else "") + "restored the last good copy"
                    restored = True
                except (StateFileError, ValidationError):
                    restored = False
            if not restored and sf is not None:
                write_json_atomic(p, _dump_default(sf.default()))
                prob.action += ("; " if prob.action else "") + "restored the default"
            elif not restored:
                prob.action += ("; " if prob.action else "") + "no good copy to restore (kept in quarantine)"
        fixed.append(prob)
    for checker in _extra_checkers:
        fixed.extend(checker(h, True))
    return fixed


def _repair_config(p: Path, home: Path, prob: Problem) -> bool:
    """A config.json that parses but has unsupported values: mend those keys only (the last good copy's
    value, else the default; ``config_defaults.repair``) and keep every other change the user made. A copy
    of the file as it was goes to quarantine/. False when the file is not a JSON object (or the mended one
    still fails): the caller then restores the whole file."""
    from .config_defaults import repair

    try:
        raw = read_json(p, default=None)
    except StateFileError:
        return False
    if not isinstance(raw, dict):
        return False
    try:
        good = read_json(last_good_path(p, home), default=None)
    except StateFileError:
        good = None
    fixed, notes = repair(raw, good)
    try:
        Config.model_validate(fixed)
    except ValidationError:
        return False
    dest = paths.quarantine_dir(home)
    ensure_dir(dest)
    dest = dest / f"{now().strftime('%Y%m%dT%H%M%S%f')}-config.json"
    shutil.copy2(p, dest)
    write_json_atomic(p, fixed)
    prob.action = f"repaired {'; '.join(notes) or 'nothing'}; every other key kept (the file as it was: {dest})"
    return True


def _register_builtin_checkers() -> None:
    from .consistency import check_interrupted_writes

    register_checker(check_interrupted_writes)


_register_builtin_checkers()
