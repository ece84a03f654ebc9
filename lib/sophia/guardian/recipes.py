"""What a task runner would run, read from its file: package.json scripts, Makefile recipes, justfile
recipes and Taskfile tasks. Pure parsing (text in, commands out); :mod:`.scripts` finds and reads the
files and judges the commands.

Each parser returns :class:`Recipe` objects: one shell command text, the line of the file it comes from,
what it is (``the script "clean"``, ``the recipe of clean``) and the folder it runs in; None when the file
cannot be understood (then the call is judged as it would be without the file). Values that cannot be
known without running something (``$(shell ...)``, a backtick, an environment variable) become shell
variables the analyzer does not know, so a path built from them is judged as unknown.

Standard library only.
"""

from __future__ import annotations

import posixpath
import re

from .lazyre import LazyRe
from .record import record

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_TARGETS = 64  # recipes gathered for one call (prerequisites and dependencies included)


@record
class Recipe:
    line: int  # 1-based line of the file where the command (or the script body) starts
    text: str  # shell text (several lines for a script body)
    label: str  # what it is, for the reason: 'the script "clean"', 'the recipe of clean'
    cwd: str  # the folder it runs in


def line_at(text: str, index: int) -> int:
    return text.count("\n", 0, max(0, index)) + 1


# -- package.json -------------------------------------------------------------------------------

# what `npm install` (no package named) runs of the project's own scripts
INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare")


def package_scripts(text: str, names: list[str], cwd: str, args: list[str]) -> list[Recipe] | None:
    """The scripts ``npm run <name>`` runs for each name (``pre<name>``, the script, ``post<name>``), the
    call's extra ``args`` appended to the named script as npm does. None: not a package.json."""
    import json

    try:
        obj = json.loads(text)
    except ValueError:
        return None
    scripts = obj.get("scripts") if isinstance(obj, dict) else None
    if not isinstance(scripts, dict):
        return [] if isinstance(obj, dict) else None
    out = []
    for name in names:
        for key in (f"pre{name}", name, f"post{name}"):
            cmd = scripts.get(key)
            if isinstance(cmd, str) and cmd.strip():
                extra = " " + " ".join(_sh_quote(x) for x in args) if key == name and args else ""
                m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
                out.append(Recipe(line_at(text, m.start()) if m else 1, cmd + extra, f'the script "{key}"', cwd))
    return out


def _sh_quote(x: str) -> str:
    if x and all(c.isalnum() or c in "-_./=:@%+,~" for c in x):
        return x
    return "'" + x.replace("'", "'\\''") + "'"


# -- Makefile -----------------------------------------------------------------------------------

_MAKE_ASSIGN = LazyRe(r"^(?:(?:export|override|private)\s+)*([A-Za-z_.][\w.-]*)\s*(::?=|:::=|\?=|\+=|!=|=)\s*(.*)$")
_MAKE_RULE = LazyRe(r"^([^:=#\t][^:=#]*?)\s*(::?)(?!=)\s*(.*)$")
_MAKE_SKIP = LazyRe(r"^(?:ifeq|ifneq|ifdef|ifndef|else|endif|-?include|sinclude|vpath|unexport|export\s*$|"
                    r"\$\(eval|\$\(info|\$\(warning|\$\(error)\b")
_MAKE_REF = LazyRe(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\}|([@<^+*?%]))")
UNKNOWN_VAR = "${__sophia_unknown__}"


@record
class Makefile:
    vars: dict[str, str]
    rules: dict[str, list[tuple[list[str], list[tuple[int, str]]]]]  # target -> [(prereqs, [(line, cmd)])]
    first: str | None
    folder: str


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line with its backslash-newline continuations joined."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 1
    for n, raw in enumerate(text.split("\n"), 1):
        if not buf:
            start = n
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            buf.append(raw[:-1])
            continue
        buf.append(raw)
        out.append((start, " ".join(buf) if len(buf) > 1 else buf[0]))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


def parse_makefile(text: str, folder: str) -> Makefile:
    mk = Makefile({}, {}, None, folder)
    current: list[tuple[int, str]] | None = None
    lines = iter(_logical_lines(text))
    for n, line in lines:
        if line.startswith("\t"):
            if current is not None:
                current.append((n, line[1:]))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("define "):
            _make_define(mk, stripped, lines)
            current = None
        elif _MAKE_SKIP.match(stripped):
            continue
        elif _make_assign(mk, stripped):
            current = None
        else:
            current = _make_rule(mk, stripped, n)
    return mk


def _make_define(mk: Makefile, head: str, lines: Iterator[tuple[int, str]]) -> None:
    """``define NAME`` ... ``endef``: a multi-line variable."""
    name = head.split()[1] if len(head.split()) > 1 else ""
    body = []
    for _n, line in lines:
        if line.strip() == "endef":
            break
        body.append(line)
    if name:
        mk.vars[name] = "\n".join(body)


def _make_assign(mk: Makefile, line: str) -> bool:
    m = _MAKE_ASSIGN.match(line)
    if not m:
        return False
    name, op, value = m.group(1), m.group(2), m.group(3).split(" #", 1)[0].strip()
    if op == "+=":
        mk.vars[name] = (mk.vars.get(name, "") + " " + value).strip()
    elif op == "?=":
        mk.vars.setdefault(name, value)
    elif op == "!=":
        mk.vars[name] = UNKNOWN_VAR
    else:
        mk.vars[name] = value
    return True


def _make_rule(mk: Makefile, line: str, n: int) -> list[tuple[int, str]] | None:
    """A rule line: its targets (the recipe lines that follow belong to them) and prerequisites."""
    m = _MAKE_RULE.match(line)
    if not m:
        return None
    targets = m.group(1).split()
    rest = m.group(3)
    recipe: list[tuple[int, str]] = []
    if ";" in rest:
        rest, inline = rest.split(";", 1)
        recipe.append((n, inline.strip()))
    if _MAKE_ASSIGN.match(rest.strip()):  # a target-specific variable: `clean: DIR = out`
        _make_assign(mk, rest.strip())
        return None
    if ":" in rest:  # a static pattern rule `objs: %.o: %.c`: its prerequisites are patterns
        rest = ""
    prereqs = [p for p in rest.replace("|", " ").split() if "%" not in p]
    for t in targets:
        if t == ".DEFAULT_GOAL":
            continue
        mk.rules.setdefault(t, []).append((prereqs, recipe))
        if mk.first is None and not t.startswith(".") and "%" not in t:
            mk.first = t
    return recipe


_MAKE_FUNCS_CWD = frozenset({"shell pwd", "CURDIR", "abspath .", "realpath .", "PWD"})


def make_expand(mk: Makefile, text: str, auto: dict[str, str], depth: int = 0) -> str:
    """``text`` with make's variables expanded as far as they are plain: ``$(VAR)``/``${VAR}`` (recursively),
    ``$@``/``$<``/``$^`` from ``auto``, ``$(MAKE)``, ``$(CURDIR)``, ``$(shell pwd)``; ``$$`` is the shell's
    ``$``. Anything else (other functions, unknown variables) becomes a shell variable nobody knows."""
    if depth > 8:
        return UNKNOWN_VAR
    parts = text.split("$$")
    return "$".join(_MAKE_REF.sub(lambda m: _make_ref(mk, m, auto, depth), p) for p in parts)


def _make_ref(mk: Makefile, m: re.Match[str], auto: dict[str, str], depth: int) -> str:
    name = (m.group(1) or m.group(2) or m.group(3) or "").strip()
    if m.group(3):
        return auto.get(name, UNKNOWN_VAR)
    if name in _MAKE_FUNCS_CWD:
        return mk.folder
    if name in ("MAKE", "MAKE_COMMAND"):
        return "make"
    if name in mk.vars:
        return make_expand(mk, mk.vars[name], auto, depth + 1)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return "${" + name + "}"  # from the environment, or empty: the shell-side analyzer decides
    return UNKNOWN_VAR


def make_default_goal(mk: Makefile) -> str | None:
    goal = mk.vars.get(".DEFAULT_GOAL", "").strip()
    return goal or mk.first


def make_recipes(mk: Makefile, goals: list[str]) -> list[Recipe]:
    """The recipe lines ``make GOAL...`` runs: each goal's prerequisites' first (depth first, each target
    once), then its own; each line as make hands it to the shell (``@``/``-``/``+`` prefixes dropped)."""
    out: list[Recipe] = []
    seen: set[str] = set()
    for g in goals:
        _make_target(mk, g, seen, out)
    return out


def _make_target(mk: Makefile, target: str, seen: set[str], out: list[Recipe]) -> None:
    if target in seen or len(seen) >= MAX_TARGETS or target not in mk.rules:
        return
    seen.add(target)
    for prereqs, recipe in mk.rules[target]:
        for p in prereqs:
            _make_target(mk, p, seen, out)
        auto = {"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs), "+": " ".join(prereqs),
                "*": UNKNOWN_VAR, "?": " ".join(prereqs)}
        for n, line in recipe:
            cmd = make_expand(mk, line.lstrip().lstrip("@-+").lstrip(), auto)
            if cmd.strip():
                out.append(Recipe(n, cmd, f"the recipe of {target}", mk.folder))


# -- justfile -----------------------------------------------------------------------------------

_JUST_ASSIGN = LazyRe(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$")
_JUST_ALIAS = LazyRe(r"^alias\s+([A-Za-z_][\w-]*)\s*:=\s*([A-Za-z_][\w-]*)\s*$")
_JUST_HEAD = LazyRe(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:]*?)?)\s*:(?!=)\s*(.*)$")
_JUST_STRING = LazyRe(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"")
_JUST_INTERP = LazyRe(r"\{\{(?!\{)(.*?)\}\}")


@record
class Justfile:
    vars: dict[str, str]
    recipes: dict[str, tuple[int, list[str], list[str], list[tuple[int, str]]]]  # name -> (line, params, deps, body)
    aliases: dict[str, str]
    first: str | None
    folder: str


def parse_justfile(text: str, folder: str) -> Justfile:
    jf = Justfile({}, {}, {}, None, folder)
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if not line or line[0] in " \t#[" or line.startswith("set ") or line.startswith("import "):
            continue
        m = _JUST_ALIAS.match(line)
        if m:
            jf.aliases[m.group(1)] = m.group(2)
            continue
        m = _JUST_ASSIGN.match(line)
        if m:
            jf.vars[m.group(1)] = just_value(jf, m.group(2))
            continue
        m = _JUST_HEAD.match(line)
        if m:
            i = _just_recipe(jf, m, lines, i)
    return jf


def _just_recipe(jf: Justfile, m: re.Match[str], lines: list[str], i: int) -> int:
    """A recipe header at line ``i`` (1-based: the header's own); its body is the indented lines after it."""
    name = m.group(1)
    params = [p.lstrip("+*$").split("=", 1)[0] for p in m.group(2).split()]
    deps = re.findall(r"\(?\s*([A-Za-z_][\w-]*)", m.group(3).split("&&", 1)[0])
    body: list[tuple[int, str]] = []
    head_line = i
    while i < len(lines) and (not lines[i].strip() or lines[i][:1] in " \t"):
        if lines[i].strip():
            body.append((i + 1, lines[i].strip()))
        i += 1
    jf.recipes[name] = (head_line, params, deps, body)
    if jf.first is None:
        jf.first = name
    return i


def just_value(jf: Justfile, expr: str) -> str:
    """A just expression's value when it is plain: string literals joined by ``+`` or ``/``, variables,
    ``justfile_directory()``; else a shell variable nobody knows."""
    pieces = [p.strip() for p in re.split(r"\s+([+/])\s+", expr.strip())]
    out = []
    for k, p in enumerate(pieces):
        if k % 2:
            out.append("" if p == "+" else "/")
            continue
        m = _JUST_STRING.fullmatch(p)
        if m:
            out.append(m.group(1) if m.group(1) is not None else m.group(2))
        elif p in jf.vars:
            out.append(jf.vars[p])
        elif p in ("justfile_directory()", "justfile_dir()", "source_directory()"):
            out.append(jf.folder)
        else:
            return UNKNOWN_VAR
    return "".join(out)


def just_recipes(jf: Justfile, calls: list[tuple[str, list[str]]]) -> list[Recipe]:
    """The lines ``just RECIPE ARGS...`` runs (dependencies first, each recipe once)."""
    out: list[Recipe] = []
    seen: set[str] = set()
    for name, args in calls:
        _just_one(jf, jf.aliases.get(name, name), args, seen, out)
    return out


def _just_one(jf: Justfile, name: str, args: list[str], seen: set[str], out: list[Recipe]) -> None:
    if name in seen or len(seen) >= MAX_TARGETS or name not in jf.recipes:
        return
    seen.add(name)
    _line, params, deps, body = jf.recipes[name]
    for d in deps:
        _just_one(jf, jf.aliases.get(d, d), [], seen, out)
    values = dict(jf.vars)
    for k, p in enumerate(params):
        values[p] = args[k] if k < len(args) else UNKNOWN_VAR
    label = f"the recipe {name}"
    if body and body[0][1].startswith("#!"):
        if re.search(r"\b(?:ba|z|da|k)?sh\b", body[0][1]):
            text = "\n".join(_just_interp(values, b) for _n, b in body[1:])
            out.append(Recipe(body[0][0] + 1, text, label, jf.folder))
        return
    for n, b in body:
        cmd = _just_interp(values, b.lstrip("@-").lstrip())
        if cmd and not cmd.startswith("#"):
            out.append(Recipe(n, cmd, label, jf.folder))


def _just_interp(values: dict[str, str], line: str) -> str:
    line = line.replace("{{{{", "\x01")
    return _JUST_INTERP.sub(lambda m: values.get(m.group(1).strip(), UNKNOWN_VAR), line).replace("\x01", "{{")


# -- Taskfile (a YAML subset: maps, lists, scalars, block scalars, flow lists) --------------------------


class YamlError(ValueError):
    pass


def yaml_load(text: str) -> object:
    """The subset of YAML a Taskfile uses: nested maps and lists by indentation, plain and quoted scalars,
    ``|``/``>`` block scalars, ``[a, b]`` flow lists, comments. Anchors, tags and flow maps raise
    YamlError (the file is then not understood). Line numbers are kept: a scalar is a (line, text) pair."""
    lines = [(n, ln) for n, ln in enumerate(text.split("\n"), 1)]
    value, _k = _yaml_block(lines, _yaml_next(lines, 0), -1)
    return value


def _yaml_next(lines: list[tuple[int, str]], k: int) -> int:
    """The index of the next line that holds content (not blank, not a comment)."""
    while k < len(lines):
        s = lines[k][1].strip()
        if s and not s.startswith("#") and s != "---":
            return k
        k += 1
    return k


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _yaml_block(lines: list[tuple[int, str]], k: int, parent: int) -> tuple[object, int]:
    if k >= len(lines) or _indent(lines[k][1]) <= parent:
        return None, k
    ind = _indent(lines[k][1])
    if lines[k][1].strip().startswith("- ") or lines[k][1].strip() == "-":
        return _yaml_list(lines, k, ind)
    return _yaml_map(lines, k, ind)


def _yaml_list(lines: list[tuple[int, str]], k: int, ind: int) -> tuple[list[object], int]:
    out: list[object] = []
    while k < len(lines) and _indent(lines[k][1]) == ind and lines[k][1].strip().startswith("-"):
        n, raw = lines[k]
        rest = raw.strip()[1:].strip()
        if not rest:
            value, k = _yaml_block(lines, _yaml_next(lines, k + 1), ind)
        elif re.match(r"^[\w.-]+\s*:(?:\s|$)", rest) and not rest.startswith(("'", '"')):
            # `- key: value` opens a map whose other keys sit at the key's indentation
            col = raw.index(rest)
            sub = [(n, " " * col + rest), *lines[k + 1:]]
            value, used = _yaml_map(sub, 0, col)
            k = k + used
        else:
            value, k = _yaml_scalar(lines, k, rest, ind)
        out.append(value)
        k = _yaml_next(lines, k)
    return out, k


def _yaml_map(lines: list[tuple[int, str]], k: int, ind: int) -> tuple[dict[str, object], int]:
    out: dict[str, object] = {}
    while k < len(lines) and _indent(lines[k][1]) == ind:
        n, raw = lines[k]
        m = re.match(r"^\s*(\"[^\"]*\"|'[^']*'|[^\s#].*?)\s*:(?:\s+(.*))?$", raw)
        if not m:
            raise YamlError(f"line {n}")
        key = m.group(1).strip("'\"")
        rest = (m.group(2) or "").strip()
        if not rest or rest.startswith("#"):
            value, k = _yaml_block(lines, _yaml_next(lines, k + 1), ind)
            if value is None and k < len(lines) and _indent(lines[k][1]) == ind and lines[k][1].strip()[:1] == "-":
                value, k = _yaml_list(lines, k, ind)  # a list at the key's own indentation
        else:
            value, k = _yaml_scalar(lines, k, rest, ind)
        out[key] = value
        k = _yaml_next(lines, k)
    return out, k


def _yaml_scalar(lines: list[tuple[int, str]], k: int, rest: str, ind: int) -> tuple[object, int]:
    n = lines[k][0]
    if rest[:1] in ("&", "*", "!", "{"):
        raise YamlError(f"line {n}: anchors, tags and flow maps are not read")
    if rest[:1] in ("|", ">"):
        return _yaml_block_scalar(lines, k + 1, ind, rest[0] == ">")
    if rest.startswith("["):
        inner = rest[1:rest.rfind("]")] if "]" in rest else rest[1:]
        return [(n, _yaml_unquote(x.strip())) for x in inner.split(",") if x.strip()], k + 1
    return (n, _yaml_unquote(rest)), k + 1


def _yaml_block_scalar(lines: list[tuple[int, str]], k: int, ind: int, folded: bool) -> tuple[object, int]:
    start = lines[k][0] if k < len(lines) else 0
    body: list[str] = []
    block_ind = None
    while k < len(lines):
        raw = lines[k][1]
        if raw.strip():
            if _indent(raw) <= ind:
                break
            block_ind = _indent(raw) if block_ind is None else block_ind
            body.append(raw[block_ind:])
        else:
            body.append("")
        k += 1
    text = (" " if folded else "\n").join(body).strip("\n")
    return (start, text), k


def _yaml_unquote(s: str) -> str:
    if s[:1] in ("'", '"') and s.endswith(s[0]) and len(s) > 1:
        return s[1:-1]
    return re.split(r"\s+#", s, maxsplit=1)[0]


_TASK_TEMPLATE = LazyRe(r"\{\{\s*(.*?)\s*\}\}")


@record
class Taskfile:
    vars: dict[str, str]
    tasks: dict[str, object]
    folder: str


def parse_taskfile(text: str, folder: str) -> Taskfile | None:
    try:
        doc = yaml_load(text)
    except (YamlError, IndexError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), dict):
        return None
    tf = Taskfile({}, doc["tasks"], folder)
    tf.vars.update({"TASKFILE_DIR": folder, "ROOT_DIR": folder, "USER_WORKING_DIR": folder})
    tf.vars.update(_task_vars(tf, doc.get("vars")))
    return tf


def _task_vars(tf: Taskfile, raw: object) -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            if isinstance(v, tuple):
                out[k] = task_expand({**tf.vars, **out}, v[1])
            else:
                out[k] = UNKNOWN_VAR  # `sh:` (a command's output) or a map: not plain
    return out


def task_expand(values: dict[str, str], text: str) -> str:
    """``{{.VAR}}`` templates replaced by plain values; any other template is unknown."""
    def one(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr.startswith(".") and expr[1:] in values:
            return values[expr[1:]]
        return UNKNOWN_VAR

    return _TASK_TEMPLATE.sub(one, text)


def task_recipes(tf: Taskfile, names: list[str], cli_vars: dict[str, str]) -> list[Recipe]:
    out: list[Recipe] = []
    seen: set[str] = set()
    for name in names:
        _task_one(tf, name, {**tf.vars, **cli_vars}, seen, out)
    return out


def _task_one(tf: Taskfile, name: str, values: dict[str, str], seen: set[str], out: list[Recipe]) -> None:
    task = tf.tasks.get(name)
    if name in seen or len(seen) >= MAX_TARGETS or task is None:
        return
    seen.add(name)
    if isinstance(task, (tuple, list)):
        task = {"cmds": task if isinstance(task, list) else [task]}
    if not isinstance(task, dict):
        return
    values = {**values, **_task_vars(Taskfile(values, {}, tf.folder), task.get("vars"))}
    cwd = _task_dir(tf, task, values)
    for dep in task.get("deps") or []:
        dep_name = dep[1] if isinstance(dep, tuple) else dep.get("task") if isinstance(dep, dict) else None
        if isinstance(dep_name, tuple):
            dep_name = dep_name[1]
        if isinstance(dep_name, str):
            _task_one(tf, dep_name, values, seen, out)
    for cmd in task.get("cmds") or []:
        _task_cmd(tf, name, cmd, values, cwd, seen, out)


def _task_dir(tf: Taskfile, task: dict[str, object], values: dict[str, str]) -> str:
    d = task.get("dir")
    if isinstance(d, tuple):
        return posixpath.normpath(posixpath.join(tf.folder, task_expand(values, d[1])))
    return tf.folder


def _task_cmd(tf: Taskfile, name: str, cmd: object, values: dict[str, str], cwd: str, seen: set[str],
              out: list[Recipe]) -> None:
    if isinstance(cmd, dict):
        if isinstance(cmd.get("task"), tuple):
            _task_one(tf, cmd["task"][1], values, seen, out)
            return
        cmd = cmd.get("cmd")
    if isinstance(cmd, tuple):
        out.append(Recipe(cmd[0], task_expand(values, cmd[1]), f"the task {name}", cwd))
