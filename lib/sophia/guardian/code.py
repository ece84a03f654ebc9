"""Interpreter one-liners (python -c, node -e, ruby -e, perl -e, php -r ...): what they delete or run.

Code given inline (``-c``/``-e``, heredocs, here-strings, piped text) is read whole; of a script file
(read by :mod:`.scripts`) only the shell commands it hands over as literal text count (``literal_shell``). Found: tree removal calls (shutil.rmtree, fs.rmSync, FileUtils.rm_rf, File::Path rmtree
...) with the path they target, shell strings handed to system()/subprocess/exec, and fork loops.
``model.eval()`` and other method calls are ordinary code.
"""

from __future__ import annotations

import re

from .lazyre import LazyRe
from .record import record

_TREE_FN = LazyRe(
    r"\b(?:shutil\s*\.\s*rmtree|rmtree|rmSync|rmdirSync|fs\s*\.\s*rm|promises\s*\.\s*rm|fsPromises\s*\.\s*rm|"
    r"rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|remove_tree|rimraf(?:\.sync)?|removedirs|emptyDirSync|"
    r"emptyDir|removeSync|fse?\s*\.\s*remove|Deno\s*\.\s*remove|rmdir|RemoveAll|deleteRecursively|"
    r"delete_tree)\b\s*(?=[(\s\"'])"
)
_FILE_FN = LazyRe(r"\b(?:os\s*\.\s*(?:remove|unlink)|unlinkSync|File\s*\.\s*delete|unlink|\.unlink)\s*(?=[(\s\"'])")
_SHELL_FN = LazyRe(
    r"\b(?:os\s*\.\s*system|os\s*\.\s*popen|subprocess\s*\.\s*(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|"
    r"execSync|exec|execFileSync|spawnSync|spawn|system|shell_exec|passthru|popen|proc_open|Open3\s*\.\s*\w+|"
    r"IO\s*\.\s*popen|Kernel\s*\.\s*system|do\s+shell\s+script|Deno\s*\.\s*run|Bun\s*\.\s*spawn|\$)\s*(?=[(\s\"'`{])"
)
_BACKTICK = LazyRe(r"`([^`]+)`|%x\{([^}]*)\}|%x\(([^)]*)\)|qx\{([^}]*)\}|qx\(([^)]*)\)")
_FORK = LazyRe(
    r"(?:\b(?:while|until|loop|for\s*\(\s*;\s*;\s*\))\b.{0,80}?\bfork\b)|(?:\bfork\b\s*(?:\(\s*\))?\s*(?:while|until)\b)"
    r"|(?:\bfork\b\s*(?:\(\s*\))?\s*(?:;\s*)?(?:redo|goto)\b)",
    re.S,
)
_HOME_REF = LazyRe(
    r"expanduser\s*\(\s*[rbuf]?['\"]~|Path\s*\.\s*home\s*\(\s*\)|environ\s*\[\s*['\"]HOME|getenv\s*\(\s*['\"]HOME|"
    r"environ\s*\.\s*get\s*\(\s*['\"]HOME|homedir\s*\(\s*\)|process\s*\.\s*env\s*\.\s*HOME|env\s*\[\s*['\"]HOME|"
    r"ENV\s*\[\s*['\"]HOME|Dir\s*\.\s*home|\$ENV\s*\{\s*['\"]?HOME|\$HOME\b|Deno\s*\.\s*env\s*\.\s*get\s*\(\s*['\"]HOME|"
    r"File\s*\.\s*expand_path\s*\(\s*['\"]~|Environment\.GetFolderPath|user\.home"
)
_READ_FN = LazyRe(r"\b(?:open|readFileSync|readFile|File\s*\.\s*(?:read|open|binread)|IO\s*\.\s*read|"
                  r"file_get_contents|fopen|slurp|Files\s*\.\s*readString)\s*(?=\()")
_NET_SEND = LazyRe(
    r"\b(?:requests|httpx|session|aiohttp\s*\.\s*ClientSession\(\s*\))\s*\.\s*(?:post|put|patch|request)\b|"
    r"\burlopen\s*\(|urllib\s*\.\s*request\s*\.\s*Request\b|http\s*\.\s*client\b|HTTPS?Connection\b|"
    r"\bfetch\s*\(|\baxios\b|https?\s*\.\s*request\s*\(|Net\s*::\s*HTTP|\bsendall\s*\(|\bsmtplib\b|"
    r"\bcurl_exec\b|\bLWP\b|HTTP::Tiny|\bsocket\s*\.\s*(?:socket|create_connection)\b|\bnet\s*\.\s*connect\b"
)
# calls that write the file named by their first argument (open() only with a writing mode)
_WRITE_FN = LazyRe(r"\b(?:open|writeFileSync|appendFileSync|writeFile|appendFile|file_put_contents|fopen|"
                   r"File\s*\.\s*(?:write|open|binwrite)|createWriteStream)\s*(?=\()")
_WRITE_MODE = LazyRe(r"['\"][rbt]*[wax+][bt+]*['\"]|\b[wax]\b|O_WRONLY|O_RDWR|O_CREAT|\bflags?\s*[:=]")
_WRITES_OPEN = frozenset({"open", "fopen", "File.open"})
# pathlib-style: Path(<p>).write_text(...) / .write_bytes / .unlink / .rename / .replace / .touch
_PATH_METHOD = LazyRe(r"\bPath\s*(?=\()")
_PATH_WRITES = LazyRe(r"^\s*(?:\.\s*(?:expanduser|resolve|absolute)\s*\(\s*\)\s*)*\.\s*(?:write_text|write_bytes|open\s*\(\s*['\"][rbt]*[wax+]|touch|"
                      r"rename|replace|symlink_to|hardlink_to|chmod)\b")
# calls that write the file named by their SECOND argument (copy/move/rename destinations)
_DEST_FN = LazyRe(r"\b(?:os\s*\.\s*(?:replace|rename)|shutil\s*\.\s*(?:copy\w*|move)|renameSync|copyFileSync|"
                  r"cpSync|File\s*\.\s*rename|FileUtils\s*\.\s*(?:mv|cp))\s*(?=\()")
_CWD_REF = LazyRe(r"getcwd\s*\(\s*\)|process\s*\.\s*cwd\s*\(\s*\)|Dir\s*\.\s*pwd|Path\s*\.\s*cwd\s*\(\s*\)|cwd\s*\(\s*\)")
# a name bound to a directory the code itself just created in the temp folder
_TEMP_BIND = r"\b{name}\s*=\s*(?:Path\s*\(\s*|str\s*\(\s*)?(?:tempfile\s*\.\s*|fs\s*\.\s*|os\s*\.\s*)?(?:mkdtemp|mkdtempSync|TemporaryDirectory|gettempdir)\s*\("
_BARE_NAME = LazyRe(r"^\s*(?:Path\s*\(\s*|str\s*\(\s*)?([A-Za-z_]\w*)\s*\)?\s*$")
TEMP_MADE = "/tmp/(a temp dir the code made)"
_STRLIT = LazyRe(r"[rbuf]?'((?:[^'\\]|\\.)*)'|[rbuf]?\"((?:[^\"\\]|\\.)*)\"|`([^`$]*)`")


@record
class CodeCall:
    kind: str  # tree | file | shell | read | write
    path: str | None  # for tree/file: "~"-relative or absolute or relative path; None = unknown
    shell: str | None = None  # for shell: the command text (None = built at run time)


def _scan(text: str, i: int, *, stop_at: str = "") -> int:
    """Index where the bracket group opening at ``text[i]`` closes (no ``stop_at``), or of the first
    ``stop_at`` character outside brackets (from depth 0); quotes are skipped. ``len(text)`` when
    there is none."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            k = i + 1
            while k < n and text[k] != c:
                k += 2 if text[k] == "\\" else 1
            i = k + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and not stop_at:
                return i
        elif c == stop_at and depth == 0:
            return i
        i += 1
    return n


def _args_text(code: str, i: int) -> str:
    """Text of the call's arguments starting at ``code[i]`` (after the function name)."""
    n = len(code)
    while i < n and code[i] in " \t":
        i += 1
    if i < n and code[i] == "(":
        return code[i + 1:_scan(code, i)]
    m = re.match(r"[^;\n]*", code[i:])
    return m.group(0) if m else ""


def _first_arg(args: str) -> str:
    return args[:_scan(args, 0, stop_at=",")]


def _concat_text(expr: str) -> str | None:
    """The string a ``'rm -rf ' + process.env.HOME`` concatenation builds, with run-time parts as shell
    variables ($HOME for a home reference, $PWD for the working directory, $V otherwise); None when the
    expression is not a concatenation of at least one literal."""
    pieces, i = [], 0
    while i <= len(expr):
        j = _scan(expr, i, stop_at="+")
        pieces.append(expr[i:j].strip())
        i = j + 1
    if len(pieces) < 2:
        return None
    out, literal = [], False
    for piece in pieces:
        if _STRLIT.fullmatch(piece):
            out.append(_literals(piece)[0])
            literal = True
        elif _HOME_REF.search(piece):
            out.append("$HOME")
        elif _CWD_REF.search(piece):
            out.append("$PWD")
        else:
            out.append("$V")
    return "".join(out) if literal else None


def _literals(text: str) -> list[str]:
    out = []
    for m in _STRLIT.finditer(text):
        val = next(g for g in m.groups() if g is not None) if any(g is not None for g in m.groups()) else ""
        out.append(val.replace("\\\\", "\\").replace("\\'", "'").replace('\\"', '"'))
    return out


def path_of(expr: str) -> str | None:
    """Best guess of the path an argument expression names; '~' stands for HOME; None = unknown."""
    expr = re.sub(r"\b(?:require|import)\s*\(\s*['\"][^'\"]*['\"]\s*\)", "", expr)
    lits = [x for x in _literals(expr) if x not in ("utf-8", "utf8")]
    if _HOME_REF.search(expr):
        rest = [x.lstrip("~").strip("/") for x in lits if not x.startswith(("HOME", "USERPROFILE"))]
        rest = [x for x in rest if x and x != "HOME"]
        return "~/" + "/".join(rest) if rest else "~"
    if _CWD_REF.search(expr):
        rest = [x.strip("/") for x in lits if x.strip("/")]
        return "./" + "/".join(rest) if rest else "."
    if lits:
        head = lits[0]
        if re.search(r"\bjoin\b", expr) and len(lits) > 1:
            return "/".join([head.rstrip("/")] + [x.strip("/") for x in lits[1:]]) or "/"
        if "{" in head or "%" in head:
            return None
        return head
    bare = expr.strip()
    if re.fullmatch(r"['\"]?\.['\"]?", bare):
        return "."
    return None


def _made_temp(code: str, arg: str) -> str | None:
    """TEMP_MADE when ``arg`` is a name the code bound to a new temp dir (``d = tempfile.mkdtemp()``)."""
    m = _BARE_NAME.match(arg)
    if m and re.search(_TEMP_BIND.format(name=re.escape(m.group(1))), code):
        return TEMP_MADE
    return None


def calls(code: str) -> list[CodeCall]:
    found: list[CodeCall] = []
    for m in _TREE_FN.finditer(code):
        name = m.group(0)
        arg = _first_arg(_args_text(code, m.end()))
        p = path_of(arg) or _made_temp(code, arg)
        # rmdir without `recursive` only removes an empty directory
        kind = "file" if "rmdir" in name and "recursive" not in code[m.end():m.end() + 200] else "tree"
        if name.strip().startswith(("fs", "promises", "fsPromises")) and "recursive" not in code[m.end():m.end() + 200]:
            kind = "file"
        found.append(CodeCall(kind, p))
    for m in _FILE_FN.finditer(code):
        arg = _first_arg(_args_text(code, m.end()))
        found.append(CodeCall("file", path_of(arg)))
    for m in _SHELL_FN.finditer(code):
        if m.group(0).startswith("$") and code[m.end():m.end() + 1] != "(":
            continue
        args = _args_text(code, m.end())
        lits = _literals(args)
        if not lits:
            found.append(CodeCall("shell", None, None))
            continue
        if args.lstrip().startswith("["):
            found.append(CodeCall("shell", None, " ".join(lits)))
        else:
            built = _concat_text(_first_arg(args))
            dynamic = bool(re.search(r"\+|\$\{|%s|\{\w*\}|\bformat\b|f['\"]", args))
            found.append(CodeCall("shell", None, built or (lits[0] if not dynamic else " ".join(lits))))
    found += _writes(code)
    for m in _READ_FN.finditer(code):
        found.append(CodeCall("read", path_of(_first_arg(_args_text(code, m.end())))))
    for m in _BACKTICK.finditer(code):
        text = next(g for g in m.groups() if g is not None)
        found.append(CodeCall("shell", None, text))
    return found


def _writes(code: str) -> list[CodeCall]:
    """Files the code writes: open() with a writing mode, writeFileSync and kin, Path(p).write_text,
    and the destination of a copy, move or rename."""
    found = []
    for m in _WRITE_FN.finditer(code):
        args = _args_text(code, m.end())
        name = re.sub(r"\s+", "", m.group(0))
        if name in _WRITES_OPEN and not _WRITE_MODE.search(args[len(_first_arg(args)):]):
            continue  # open() for reading
        found.append(CodeCall("write", path_of(_first_arg(args))))
    for m in _PATH_METHOD.finditer(code):
        end = _scan(code, m.end())
        if _PATH_WRITES.match(code[end + 1:end + 90]):
            found.append(CodeCall("write", path_of(code[m.end() + 1:end])))
    for m in _DEST_FN.finditer(code):
        args = _args_text(code, m.end())
        rest = args[len(_first_arg(args)) + 1:]
        found.append(CodeCall("write", path_of(_first_arg(rest))))
    return found


def path_literals(code: str) -> list[str]:
    """String literals in the code that look like absolute or home paths."""
    return [x for x in _literals(code) if x.startswith(("/", "~/")) and "\n" not in x and len(x) < 300]


def sends_over_network(code: str) -> bool:
    return bool(_NET_SEND.search(code))


def is_fork_loop(code: str) -> bool:
    return bool(_FORK.search(code))


# -- script files -------------------------------------------------------------------------------
# In a whole Python or Node file only the clearest calls are read: the shell command handed to
# os.system / subprocess / child_process as a literal string (or a list of literal strings). A command
# built at run time is not guessed at: a file is a program, not a one-liner.
_FILE_SHELL = LazyRe(
    r"\b(?:os\s*\.\s*(?:system|popen)|subprocess\s*\.\s*(?:run|call|check_call|check_output|Popen|getoutput|"
    r"getstatusoutput)|(?:child_process|cp|childProcess)\s*\.\s*(?:exec|execSync|execFile|execFileSync|spawn|"
    r"spawnSync)|execSync|execFileSync|spawnSync|shell\s*\.\s*exec)\s*(?=\()")
_NODE_BARE = LazyRe(r"(?<![.\w])(?:exec|execFile|spawn)\s*(?=\()")
_COMMENT_LINE = LazyRe(r"^\s*(?:#|//|\*)")


def literal_shell(code: str) -> list[tuple[int, str]]:
    """(offset, command) of each shell command the file hands to a process call as literal text: a
    string, or a list of strings (the program and its arguments), joined as the shell would see it.
    ``exec``/``spawn`` alone count in a file that requires child_process."""
    found = [m for m in _FILE_SHELL.finditer(code)]
    if "child_process" in code:
        found += list(_NODE_BARE.finditer(code))
    out = []
    for m in sorted(found, key=lambda m: m.start()):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if _COMMENT_LINE.match(code[line_start:m.start() + 1]):
            continue
        args = _args_text(code, m.end())
        first = _first_arg(args)
        cmd = _literal_words(first)
        if cmd is None:
            continue
        rest = _literal_words(_first_arg(args[len(first) + 1:])) if args[len(first):len(first) + 1] == "," else None
        if rest and args[len(first) + 1:].lstrip().startswith("["):
            cmd += " " + rest  # spawn('rm', ['-rf', dir]) / execFile(prog, [args])
        out.append((m.start(), cmd))
    return out


def _literal_words(expr: str) -> str | None:
    """The shell text of a literal string, or of a list of literal strings; None for anything built."""
    expr = expr.strip()
    if expr.startswith("[") and expr.endswith("]"):
        items, i, inner = [], 0, expr[1:-1]
        while i < len(inner):
            j = _scan(inner, i, stop_at=",")
            items.append(inner[i:j].strip())
            i = j + 1
        words = [_one_literal(x) for x in items if x]
        if not words or any(w is None for w in words):
            return None
        return " ".join(_quote(w) for w in words if w is not None)
    return _one_literal(expr)


def _one_literal(expr: str) -> str | None:
    m = _STRLIT.fullmatch(expr)
    if not m or expr[:1] in "fF" or expr[:2].lower() in ("rf", "fr"):
        return None
    return _literals(expr)[0]


def _quote(w: str) -> str:
    if w and all(c.isalnum() or c in "-_./=:@%+,~" for c in w):
        return w
    return "'" + w.replace("'", "'\\''") + "'"
