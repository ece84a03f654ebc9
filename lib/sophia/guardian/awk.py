"""What an awk program runs and writes: ``system(cmd)``, ``cmd | getline``, ``print ... | cmd`` (and
gawk's ``|&`` coprocesses), ``print ... > file``.

Standard library only. The program is read token by token; a command is the concatenation of string
literals (escapes decoded: ``"rm\\x20-rf\\040~"`` is ``rm -rf ~``) and variables assigned a literal
earlier, in the program or with ``-v name=value``; a field (``$1``) or anything computed is unknown.
``print X | "sh"`` hands the printed text to the command's standard input, so the text is judged as the
script the shell reads.
"""

from __future__ import annotations

from .lazyre import LazyRe
from .shell import UNKNOWN

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer

_TOKEN = LazyRe(
    r"(?:[ \t\r]|\\\n)*(?:(?P<nl>[\n;])|(?P<cmt>#[^\n]*)|\"(?P<str>(?:[^\"\\]|\\.)*)\"|(?P<num>[0-9]+(?:\.[0-9]*)?)|"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\|&|\|\||&&|>>|>=|<=|==|!=|\+\+|--|[-+*/%^]=|.))", 0)
_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "/": "/", "\\": "\\",
        '"': '"'}
_ENDS = frozenset({";", "\n", "{", "}"})
_VALUE_KINDS = frozenset({"str", "num", "name", "field"})


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        d = s[i + 1]
        if d in "01234567":
            j = i + 1
            while j < min(len(s), i + 4) and s[j] in "01234567":
                j += 1
            out.append(chr(int(s[i + 1:j], 8) & 0xFF))
            i = j
        elif d == "x" and i + 2 < len(s) and s[i + 2] in "0123456789abcdefABCDEF":
            j = i + 2
            while j < min(len(s), i + 4) and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(s[i + 2:j], 16)))
            i = j
        else:
            out.append(_ESC.get(d, d))
            i += 2
    return "".join(out)


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: str (decoded), num, name, field (``$``), end (``;``/newline), regex, op."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text[pos:])
        if not m or m.end() == 0:
            break
        pos += m.end()
        kind = m.lastgroup or "op"
        val = m.group(kind) if kind else ""
        if kind == "cmt":
            continue
        if kind == "op" and val == "/" and (not out or out[-1][0] in ("end", "op") and out[-1][1] not in (")", "]")):
            end = _regex_end(text, pos)  # a regex literal, not a division
            out.append(("regex", text[pos:end]))
            pos = end + 1
            continue
        if kind == "op" and val == "$":
            kind = "field"
        out.append(("end" if kind == "nl" else "str" if kind == "str" else kind, _unescape(val) if kind == "str" else val))
    return out


def _regex_end(text: str, pos: int) -> int:
    i = pos
    while i < len(text) and text[i] not in "/\n":
        i += 2 if text[i] == "\\" else 1
    return min(i, len(text))


def variables(args: list[str]) -> dict[str, str]:
    """``-v name=value`` / ``--assign=name=value`` values an awk command line sets."""
    out: dict[str, str] = {}
    for i, x in enumerate(args):
        val = None
        if x in ("-v", "--assign") and i + 1 < len(args):
            val = args[i + 1]
        elif x.startswith("-v") and len(x) > 2:
            val = x[2:]
        elif x.startswith("--assign="):
            val = x.split("=", 1)[1]
        if val and "=" in val:
            k, v = val.split("=", 1)
            out[k] = _unescape(v)
    return out


class _Program:
    """One pass over the tokens: assignments remembered, commands and writes collected."""

    def __init__(self, toks: list[tuple[str, str]], values: dict[str, str], record: str | None) -> None:
        self.toks = toks
        self.values = dict(values)
        self.record = record  # the input line, when it is known
        self.runs: list[tuple[str, str | None]] = []  # (command, text piped into it or None)
        self.writes: list[str] = []
        self.printed: list[str] = []  # what plain print statements write to standard output
        self.inet = False  # gawk's /inet/ special files: a network connection

    def walk(self) -> None:
        toks = self.toks
        i = 0
        while i < len(toks):
            kind, val = toks[i]
            nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
            if kind == "name" and val in ("print", "printf"):
                i = self._print(i + 1, val == "printf")
                continue
            if kind == "name" and nxt == "=" and (i == 0 or toks[i - 1][0] != "field"):
                end = self._expr_end(i + 2)
                self.values[val] = self.value(toks[i + 2:end])
            elif kind == "name" and val == "system" and nxt == "(":
                end = self._close(i + 1)
                self.runs.append((self.value(toks[i + 2:end]), None))
            elif kind == "op" and val in ("|", "|&") and nxt == "getline":
                start = self._expr_start(i)
                self._run(self.value(toks[start:i]), None)
            i += 1

    def _run(self, cmd: str, piped: str | None) -> None:
        if cmd.startswith("/inet"):
            self.inet = True  # reading or writing a network connection, not running a command
        else:
            self.runs.append((cmd, piped))

    def _print(self, i: int, formatted: bool) -> int:
        """A print statement from ``toks[i]``: its arguments, then ``| cmd``, ``|& cmd`` or ``> file``."""
        toks = self.toks
        end = self._expr_end(i)
        depth = 0
        for k in range(i, end):
            v = toks[k][1] if toks[k][0] == "op" else ""
            depth += (v in ("(", "[")) - (v in (")", "]"))
            if depth == 0 and v in ("|", "|&", ">", ">>"):
                target = self.value(toks[k + 1:end])
                text = self._printed(toks[i:k], formatted)
                if v in ("|", "|&"):
                    self._run(target, text)
                else:
                    self.writes.append(target)
                return end
        self.printed.append(self._printed(toks[i:end], formatted))
        return end

    def _printed(self, toks: list[tuple[str, str]], formatted: bool) -> str:
        """The text print (or printf, its format applied) writes."""
        if not formatted:
            return self.value(toks)
        from .rules_exec import printed_text

        args: list[list[tuple[str, str]]] = [[]]
        depth = 0
        for t in toks:
            v = t[1] if t[0] == "op" else ""
            depth += (v in ("(", "[")) - (v in (")", "]"))
            if depth <= 1 and v == "," and (depth == 0 or toks[0][1] == "("):
                args.append([])
            else:
                args[-1].append(t)
        return printed_text("printf", [self.value(x) for x in args if x])

    def _expr_end(self, i: int) -> int:
        depth = 0
        toks = self.toks
        while i < len(toks):
            kind, v = toks[i]
            if kind in ("op", "end"):
                if depth == 0 and (kind == "end" or v in ("}", "{")):
                    return i
                depth += (v in ("(", "[")) - (v in (")", "]"))
                if depth < 0:
                    return i
            i += 1
        return i

    def _expr_start(self, i: int) -> int:
        """Where the expression before the ``|`` at ``i`` begins (strings, names, fields, groups)."""
        toks = self.toks
        k = i
        while k > 0:
            kind, v = toks[k - 1]
            if kind in _VALUE_KINDS:
                k -= 1
            elif v == ")":
                depth = 0
                while k > 0:
                    k -= 1
                    w = toks[k][1] if toks[k][0] == "op" else ""
                    depth += (w == ")") - (w == "(")
                    if depth == 0:
                        break
            else:
                break
        return k

    def _close(self, i: int) -> int:
        """The index of the ``)`` closing the ``(`` at ``i``."""
        depth = 0
        for k in range(i, len(self.toks)):
            v = self.toks[k][1] if self.toks[k][0] == "op" else ""
            depth += (v == "(") - (v == ")")
            if depth == 0:
                return k
        return len(self.toks)

    def value(self, toks: list[tuple[str, str]]) -> str:
        """A concatenation's value; what cannot be known is UNKNOWN; ``,`` (print's separator) is a blank."""
        out: list[str] = []
        k = 0
        while k < len(toks):
            kind, v = toks[k]
            nxt = toks[k + 1] if k + 1 < len(toks) else ("", "")
            if kind in ("str", "num"):
                out.append(v)
            elif kind == "name" and v == "ENVIRON" and nxt[1] == "[" and k + 3 < len(toks) and toks[k + 2][0] == "str":
                out.append("${" + toks[k + 2][1] + "}")  # the shell that runs the command reads the same variable
                k += 3
            elif kind == "name":
                out.append(self.values.get(v, UNKNOWN))
            elif kind == "field":
                out.append(self._field(nxt))
                k += 1  # the field's number or name
            elif v == ",":
                out.append(" ")
            elif v not in ("(", ")"):
                out.append(UNKNOWN)
            k += 1
        return "".join(out)

    def _field(self, tok: tuple[str, str]) -> str:
        """``$0``/``$N`` of the input line, when it is known."""
        if self.record is None or tok[0] != "num" or not tok[1].isdigit():
            return UNKNOWN
        n = int(tok[1])
        parts = self.record.split()
        return self.record if n == 0 else parts[n - 1] if n <= len(parts) else ""


def read(text: str, values: dict[str, str] | None = None, record: str | None = None) -> _Program:
    prog = _Program(tokens(text), values or {}, record)
    prog.walk()
    return prog


def judge(a: Analyzer, text: str, values: dict[str, str], depth: int, via: str, record: str | None = None) -> None:
    """Judge what an awk program runs (as shell commands) and which files it writes; ``record``: the
    input line when it is known (``echo 'cmd' | awk '{system($0)}'``)."""
    from .rules_exec import shell_quote
    from .rules_fs import judge_write

    prog = read(text, values, record)
    if prog.inet and any(UNKNOWN in cmd for cmd, _p in prog.runs):
        a.add("deny", "reverse_shell", f"{via} runs commands it reads from a network connection (a reverse shell)",
              "Do not give a remote machine a shell here.")
    for cmd, piped in prog.runs:
        if cmd.strip() and cmd != UNKNOWN:
            a.script(cmd if piped is None else f"printf '%s\\n' {shell_quote(piped)} | {cmd}", depth)
    for path in prog.writes:
        if path and UNKNOWN not in path and not path.startswith("/dev/std"):
            judge_write(a, path, via)


def printed(text: str, values: dict[str, str]) -> str | None:
    """What an awk program prints with plain print statements, when it prints some literal text (None
    otherwise): ``awk '{print "rm -rf " $1}' | sh`` hands ``rm -rf <field>`` lines to the shell."""
    prog = read(text, values)
    lines = [p for p in prog.printed if p.strip(UNKNOWN + " ")]
    return "\n".join(lines) if lines else None
