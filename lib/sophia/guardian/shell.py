"""A small bash lexer and splitter: enough of the grammar to know what a command line runs.

Standard library only (runs on the hook path under ``python -I -S``).

``parse(text)`` returns a :class:`Script`: a flat list of :class:`Command` objects in source
order. Each command keeps its words (as :class:`Word`, a list of parts so that expansions can be
resolved later against what the analyzer knows: cwd, HOME, variables set earlier), its
redirections (with heredoc bodies), leading ``VAR=value`` assignments, and its place in a pipeline.
Separators ``; && || & |`` and newlines split commands; ``( )`` subshells and ``{ }`` groups are
flattened; reserved words (``if then do while ! time`` ...) are stripped from the front of a
command. Quotes, backslashes, line continuations and ``$'...'`` are decoded; ``$(...)``, backticks
and ``<(...)``/``>(...)`` become :class:`Part` objects of kind ``sub``/``proc`` whose text the
analyzer parses again as commands. The lexer never raises on odd input: unterminated quotes or
substitutions run to the end of the text.
"""

from __future__ import annotations

from .record import field, record

UNKNOWN = "\x00"  # stands for text the analyzer cannot know (an unknown variable, a command's output)

_META = frozenset(" \t\n;&|()<>")
_RESERVED_PREFIX = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"})
_RESERVED_ALONE = frozenset({"fi", "done", "esac", "}", "then", "else", "do", "{", "!"})
_SPECIAL_VARS = frozenset("@*#?$!-0123456789")


@record
class Part:
    kind: str  # lit | var | sub | proc | tilde | arith
    text: str
    quoted: bool = False
    default: str | None = None  # ${VAR:-default}


@record
class Word:
    parts: list[Part] = field(default_factory=list)
    raw: str = ""

    @property
    def glob(self) -> bool:
        return any(p.kind == "lit" and not p.quoted and any(c in p.text for c in "*?[") for p in self.parts)

    @property
    def quoted(self) -> bool:
        return any(p.quoted for p in self.parts)

    def literal(self) -> str | None:
        """The word's text if it has no expansions, else None."""
        if all(p.kind == "lit" for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None

    def subs(self) -> list[Part]:
        return [p for p in self.parts if p.kind in ("sub", "proc")]


@record
class Redir:
    op: str  # > >> < << <<- <<< >& <& &> &>> >| <>
    fd: str = ""
    target: Word | None = None
    heredoc: str | None = None
    heredoc_quoted: bool = False


@record
class Command:
    words: list[Word] = field(default_factory=list)
    redirs: list[Redir] = field(default_factory=list)
    assigns: list[tuple[str, Word]] = field(default_factory=list)
    pipeline: int = 0  # index of the pipeline this command belongs to
    stage: int = 0  # position inside the pipeline (0 = first)
    background: bool = False
    funcdef: str | None = None  # name if this command is `name () {` (a function definition)
    depth: int = 0  # nesting of ( ) / { } groups
    subshells: tuple[int, ...] = ()  # the ( ) subshells it runs in, outermost first (what they change stays inside)


@record
class Script:
    commands: list[Command] = field(default_factory=list)

    def pipeline_of(self, cmd: Command) -> list[Command]:
        return [c for c in self.commands if c.pipeline == cmd.pipeline]


# ---------------------------------------------------------------------------------------------
# scanning helpers


def _skip_single(s: str, i: int) -> int:
    """``s[i]`` is ``'``; return the index after the closing quote."""
    j = s.find("'", i + 1)
    return len(s) if j < 0 else j + 1


def _skip_double(s: str, i: int) -> int:
    """``s[i]`` is ``"``; return the index after the closing quote (nested $( ) respected)."""
    i += 1
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and s.startswith("$(", i):
            i = match_paren(s, i + 1) + 1
            continue
        if c == "`":
            i = _skip_backtick(s, i)
            continue
        i += 1
    return n


def _skip_backtick(s: str, i: int) -> int:
    i += 1
    n = len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == "`":
            return i + 1
        i += 1
    return n


def _match_close(s: str, i: int, opening: str, closing: str, *, shell_code: bool) -> int:
    """``s[i]`` is ``opening``; return the index of its matching ``closing`` (len(s) if unterminated).

    Quotes are skipped; with ``shell_code`` (a subshell's body) backticks and comments are too.
    """
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            i = _skip_single(s, i)
            continue
        if c == '"':
            i = _skip_double(s, i)
            continue
        if shell_code and c == "`":
            i = _skip_backtick(s, i)
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i
        elif shell_code and c == "#" and (i == 0 or s[i - 1] in " \t\n;"):
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        i += 1
    return n


def match_paren(s: str, i: int) -> int:
    """``s[i]`` is ``(``; return the index of its matching ``)`` (or len(s) if unterminated)."""
    return _match_close(s, i, "(", ")", shell_code=True)


def substitutions(text: str) -> list[str]:
    """The bodies of the ``$(...)`` and backtick substitutions in ``text``, read as bash reads an
    arithmetic expression (``$(( $(cmd) + 1 ))`` runs ``cmd``): quotes and operators are plain text."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("$((", i):
            end = match_paren(text, i + 1)
            out += substitutions(text[i + 3:max(i + 3, end - 1)])
            i = end + 1
        elif text.startswith("$(", i):
            end = match_paren(text, i + 1)
            out.append(text[i + 2:end])
            i = end + 1
        elif text[i] == "`":
            end = _skip_backtick(text, i)
            out.append(_unbacktick(text[i + 1:end - 1] if text[end - 1:end] == "`" else text[i + 1:end]))
            i = end
        else:
            i += 1
    return out


def _match_brace(s: str, i: int) -> int:
    """``s[i]`` is ``{`` of ``${``; return the index of the matching ``}``."""
    return _match_close(s, i, "{", "}", shell_code=False)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(s: str, i: int) -> tuple[str, int]:
    """``s[i:]`` starts after ``$'``; decode to the closing quote."""
    out: list[str] = []
    n = len(s)
    while i < n:
        c = s[i]
        if c == "'":
            return "".join(out), i + 1
        if c == "\\" and i + 1 < n:
            text, i = _ansi_escape(s, i)
            out.append(text)
            continue
        out.append(c)
        i += 1
    return "".join(out), n


_HEX = "0123456789abcdefABCDEF"
_OCT = "01234567"


def _digits_end(s: str, j: int, lim: int, digits: str) -> int:
    """The end of the run of ``digits`` starting at ``s[j]``, at most ``lim``."""
    lim = min(lim, len(s))
    while j < lim and s[j] in digits:
        j += 1
    return j


def _ansi_escape(s: str, i: int) -> tuple[str, int]:
    """``s[i]`` is a backslash inside ``$'...'`` with a character after it: decode that one escape."""
    d = s[i + 1]
    if d in _ANSI:
        return _ANSI[d], i + 2
    if d == "x":
        j = _digits_end(s, i + 2, i + 4, _HEX)
        return (chr(int(s[i + 2:j], 16)) if j > i + 2 else "\\x"), j
    if d in "uU":
        j = _digits_end(s, i + 2, i + (6 if d == "u" else 10), _HEX)
        if j == i + 2:
            return "\\" + d, j
        try:
            return chr(int(s[i + 2:j], 16)), j
        except (ValueError, OverflowError):
            return UNKNOWN, j
    if d in _OCT:
        j = _digits_end(s, i + 1, i + 4, _OCT)
        return chr(int(s[i + 1:j], 8) & 0xFF), j
    if d == "c" and i + 2 < len(s):
        return chr(ord(s[i + 2]) & 0x1F), i + 3
    return "\\" + d, i + 2


def _dollar(s: str, i: int, parts: list[Part], quoted: bool = False) -> int:
    """``s[i]`` is ``$``; append the expansion part, return the next index."""
    n = len(s)
    nxt = s[i + 1] if i + 1 < n else ""
    if nxt == "(":
        return _paren_sub(s, i, parts, quoted)
    if nxt == "{":
        return _braced_var(s, i, parts, quoted)
    if nxt and (nxt.isalpha() or nxt == "_"):
        j = i + 1
        while j < n and (s[j].isalnum() or s[j] == "_"):
            j += 1
        parts.append(Part("var", s[i + 1:j], quoted))
        return j
    if nxt and nxt in _SPECIAL_VARS:
        parts.append(Part("var", nxt, quoted))
        return i + 2
    if nxt == "'" and not quoted:
        text, j = _ansi_c(s, i + 2)
        parts.append(Part("lit", text, True))
        return j
    if nxt == '"' and not quoted:
        return i + 1  # $"..." is a translated string: treat as "..."
    parts.append(Part("lit", "$", quoted))
    return i + 1


def _paren_sub(s: str, i: int, parts: list[Part], quoted: bool) -> int:
    """``s[i:]`` starts with ``$(``: a command substitution, or ``$((`` arithmetic."""
    end = match_paren(s, i + 1)
    if s.startswith("$((", i):
        parts.append(Part("arith", s[i + 3:max(i + 3, end - 1)], quoted))
    else:
        parts.append(Part("sub", s[i + 2:end], quoted))
    return end + 1


def _braced_var(s: str, i: int, parts: list[Part], quoted: bool) -> int:
    """``s[i:]`` starts with ``${``: the variable's name and its ``:-``/``:=``/``-``/``=`` default."""
    end = _match_brace(s, i + 1)
    body = s[i + 2:end]
    k = 1 if body[:1] in ("#", "!") and len(body) > 1 else 0
    while k < len(body) and (body[k].isalnum() or body[k] == "_"):
        k += 1
    name = body[:k].lstrip("#!") or body[:1]
    rest = body[k:]
    default = None
    for op in (":-", ":=", "-", "="):
        if rest.startswith(op):
            default = rest[len(op):]
            break
    parts.append(Part("var", name, quoted, default))
    return end + 1


def _double(s: str, i: int, parts: list[Part]) -> int:
    """``s[i]`` is ``"``; parse to the closing quote."""
    i += 1
    n = len(s)
    buf: list[str] = []

    def flush() -> None:
        if buf:
            parts.append(Part("lit", "".join(buf), True))
            buf.clear()

    while i < n:
        c = s[i]
        if c == '"':
            flush()
            if not parts or parts[-1].kind != "lit" or not parts[-1].quoted:
                parts.append(Part("lit", "", True))
            return i + 1
        if c == "\\" and i + 1 < n:
            d = s[i + 1]
            if d == "\n":
                i += 2
                continue
            if d in '$`"\\':
                buf.append(d)
                i += 2
                continue
            buf.append(c)
            i += 1
            continue
        if c == "$":
            flush()
            i = _dollar(s, i, parts, True)
            continue
        if c == "`":
            flush()
            i = _backtick(s, i, parts, True)
            continue
        buf.append(c)
        i += 1
    flush()
    return n


def _backtick(s: str, i: int, parts: list[Part], quoted: bool = False) -> int:
    """``s[i]`` is a backtick: append the command substitution up to the closing one."""
    end = _skip_backtick(s, i)
    inner = s[i + 1:end - 1] if s[end - 1:end] == "`" and end - 1 > i else s[i + 1:end]
    parts.append(Part("sub", _unbacktick(inner), quoted))
    return end


def _unbacktick(inner: str) -> str:
    return inner.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\")


def _single(s: str, i: int, parts: list[Part]) -> int:
    """``s[i]`` is ``'``: the literal text up to the closing quote."""
    end = _skip_single(s, i)
    parts.append(Part("lit", s[i + 1:end - 1] if s[end - 1:end] == "'" and end - 1 > i else s[i + 1:end], True))
    return end


def _escaped(s: str, i: int, parts: list[Part]) -> int:
    """``s[i]`` is an unquoted backslash (not a line continuation): the next character, quoted."""
    if i + 1 < len(s):
        parts.append(Part("lit", s[i + 1], True))
    return i + 2


def _tilde(s: str, i: int, parts: list[Part], stops: str) -> int:
    """``s[i]`` is a ``~`` that expands: ``~`` or ``~user``, up to a ``/`` or one of ``stops``."""
    j = i + 1
    n = len(s)
    while j < n and s[j] not in _META and s[j] not in stops:
        j += 1
    parts.append(Part("tilde", s[i + 1:j]))
    return j


# one step of a word for each character that starts a part of its own (the text before it is flushed)
_WORD_STEPS = {
    "\\": _escaped,
    "'": _single,
    '"': _double,
    "$": _dollar,
    "`": _backtick,
}


def _flush(buf: list[str], parts: list[Part]) -> None:
    if buf:
        parts.append(Part("lit", "".join(buf), False))
        buf.clear()


def _word(s: str, i: int) -> tuple[Word, int]:
    start = i
    n = len(s)
    parts: list[Part] = []
    buf: list[str] = []
    while i < n:
        c = s[i]
        if c in _META:
            if c != "(" or not buf or buf[-1] != "=" or parts:
                break
            # `arr=(a b)` array assignment: keep the parenthesised list inside the word
            end = match_paren(s, i)
            buf.append(s[i:end + 1])
            i = end + 1
        elif c == "\\" and s.startswith("\\\n", i):
            i += 2  # a line continuation
        elif c in _WORD_STEPS:
            _flush(buf, parts)
            i = _WORD_STEPS[c](s, i, parts)
        elif c == "~" and i == start:
            i = _tilde(s, i, parts, "/\"'$`\\")
        elif c == "~" and not parts and buf and buf[-1] in "=:" and "=" in buf:
            _flush(buf, parts)  # `VAR=~/x` or `PATH=a:~/b`
            i = _tilde(s, i, parts, "/\"'$`\\:")
        else:
            buf.append(c)
            i += 1
    _flush(buf, parts)
    return Word(parts, s[start:i]), i


# ---------------------------------------------------------------------------------------------
# tokens

_OPS = ("&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&",
        ";", "&", "|", "(", ")", ">", "<", "\n")
_REDIR_OPS = frozenset({"&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<"})


@record
class _Tok:
    kind: str  # word | op | redir
    word: Word | None = None
    op: str = ""
    fd: str = ""


def tokenize(s: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    n = len(s)
    pending: list[tuple[Redir, str, bool]] = []  # heredocs waiting for their body
    at_word_start = True
    while i < n:
        c = s[i]
        if c in " \t":
            i += 1
            at_word_start = True
        elif c == "\\" and s.startswith("\\\n", i):
            i += 2
        elif c == "#" and at_word_start:
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif c == "\n":
            toks.append(_Tok("op", op="\n"))
            i = _read_heredocs(s, i + 1, pending)
            pending.clear()
            at_word_start = True
        elif c in "<>" and s.startswith("(", i + 1):
            i = _proc_sub(s, i, toks)
            at_word_start = False
        else:
            fd, j = _redir_fd(s, i)
            if s[j] in "&|;()<>":
                i = _operator(s, j, fd, toks)
                at_word_start = True
            else:
                i = _word_token(s, i, toks, pending)
                at_word_start = False
    for r, _d, _s in pending:
        r.heredoc = ""
    return toks


def _proc_sub(s: str, i: int, toks: list[_Tok]) -> int:
    """``s[i:]`` starts with ``<(`` or ``>(``: one word, a process substitution."""
    end = match_paren(s, i + 1)
    toks.append(_Tok("word", Word([Part("proc", s[i + 2:end], False, s[i])], s[i:end + 1])))
    return end + 1


def _redir_fd(s: str, i: int) -> tuple[str, int]:
    """The file descriptor before a redirection (``2>``) and the index after it; ``("", i)`` if none."""
    if not s[i].isdigit():
        return "", i
    j = i
    n = len(s)
    while j < n and s[j].isdigit():
        j += 1
    if j < n and s[j] in "<>" and not s.startswith("(", j + 1):
        return s[i:j], j
    return "", i


def _operator(s: str, i: int, fd: str, toks: list[_Tok]) -> int:
    """``s[i]`` starts an operator: append it (a redirection keeps its ``fd``), return the index after it."""
    op = next((o for o in _OPS if s.startswith(o, i)), s[i])
    if op in _REDIR_OPS:
        toks.append(_Tok("redir", op=op, fd=fd))
    else:
        toks.append(_Tok("op", op=op))
    return i + len(op)


def _word_token(s: str, i: int, toks: list[_Tok], pending: list[tuple[Redir, str, bool]]) -> int:
    """A word; after ``<<``/``<<-`` it is a heredoc's delimiter and the heredoc waits for its body."""
    w, i = _word(s, i)
    tok = _Tok("word", w)
    toks.append(tok)
    if len(toks) >= 2 and toks[-2].kind == "redir" and toks[-2].op in ("<<", "<<-"):
        r = Redir(toks[-2].op)
        delim = "".join(p.text for p in w.parts)
        pending.append((r, delim, toks[-2].op == "<<-"))
        r.heredoc_quoted = w.quoted
        tok.op = "heredoc-delim"
        # remember the Redir on the token so the parser can attach the body
        tok.fd = str(len(_HEREDOC_REGISTRY))
        _HEREDOC_REGISTRY.append(r)
    return i


_HEREDOC_REGISTRY: list[Redir] = []


def _read_heredocs(s: str, i: int, pending: list[tuple[Redir, str, bool]]) -> int:
    n = len(s)
    for r, delim, strip in pending:
        lines: list[str] = []
        while i < n:
            j = s.find("\n", i)
            line = s[i:] if j < 0 else s[i:j]
            i = n if j < 0 else j + 1
            check = line.lstrip("\t") if strip else line
            if check == delim or check.rstrip() == delim:
                break
            lines.append(check)
        r.heredoc = "\n".join(lines)
    return i


# ---------------------------------------------------------------------------------------------
# parser


def _is_assignment(w: Word) -> tuple[str, Word] | None:
    if not w.parts or w.parts[0].kind != "lit" or w.parts[0].quoted:
        return None
    head = w.parts[0].text
    eq = head.find("=")
    if eq <= 0:
        return None
    name = head[:eq].rstrip("+")
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(ch.isalnum() or ch == "_" for ch in name):
        return None
    rest = [Part("lit", head[eq + 1:], False)] if head[eq + 1:] else []
    return name, Word(rest + w.parts[1:], w.raw[w.raw.find("=") + 1:])


def parse(text: str) -> Script:
    """Split ``text`` into commands. Never raises."""
    _HEREDOC_REGISTRY.clear()
    toks = tokenize(text)
    return _Parser(toks, list(_HEREDOC_REGISTRY)).run()


class _Parser:
    """Walks the tokens once, filling ``cur`` and closing it into ``script`` at each separator."""

    def __init__(self, toks: list[_Tok], registry: list[Redir]) -> None:
        self.toks = toks
        self.registry = registry  # heredoc redirections, indexed by their delimiter token's fd
        self.script = Script()
        self.pipeline = 0
        self.stage = 0
        self.depth = 0
        self.groups: list[int] = []  # open ( ) and { } groups: a subshell's id, or 0 for a { } group
        self.next_sub = 0
        self.cur = Command()
        self.k = 0  # the token being read

    def run(self) -> Script:
        toks = self.toks
        while self.k < len(toks):
            t = toks[self.k]
            if t.kind == "op":
                self.operator(t.op)
            elif t.kind == "redir":
                self.redirection(t)
            else:
                assert t.word is not None
                self.word(t.word)
        self.finish(True)
        return self.script

    def finish(self, next_pipeline: bool, background: bool = False) -> None:
        """Close the current command (if it has anything) and start the next one."""
        cur = self.cur
        if cur.words or cur.redirs or cur.assigns:
            cur.background = background
            self.script.commands.append(cur)
            if next_pipeline:
                self.pipeline += 1
                self.stage = 0
            else:
                self.stage += 1
        elif next_pipeline and self.stage:
            self.pipeline += 1
            self.stage = 0
        self.cur = Command(pipeline=self.pipeline, stage=self.stage, depth=self.depth, subshells=self._subshells())

    def _subshells(self) -> tuple[int, ...]:
        return tuple(g for g in self.groups if g)

    def _close_group(self) -> None:
        self.finish(True)
        self.depth = max(0, self.depth - 1)
        if self.groups:
            self.groups.pop()
        self.cur.depth = self.depth
        self.cur.subshells = self._subshells()

    def _next_is(self, kind: str, op: str | None = None) -> bool:
        k = self.k + 1
        return k < len(self.toks) and self.toks[k].kind == kind and (op is None or self.toks[k].op == op)

    def operator(self, op: str) -> None:
        if op in ("|", "|&"):
            self.finish(False)
        elif op == "(" and len(self.cur.words) == 1 and self._next_is("op", ")"):
            lit = self.cur.words[0].literal()  # `name ( )` is a function definition
            self.cur.funcdef = lit if lit is not None else "?"
            self.k += 1
            self.finish(True)
        elif op == "(":
            self.finish(True)
            self.depth += 1
            self.next_sub += 1
            self.groups.append(self.next_sub)
            self.cur.depth = self.depth
            self.cur.subshells = self._subshells()
        elif op == ")":
            self._close_group()
        else:
            self.finish(True, background=(op == "&"))
        self.k += 1

    def redirection(self, t: _Tok) -> None:
        r = Redir(t.op, t.fd)
        if self._next_is("word"):
            nt = self.toks[self.k + 1]
            if nt.op == "heredoc-delim":
                r = self.registry[int(nt.fd)]
                r.fd = t.fd
            r.target = nt.word
            self.k += 1
        self.k += 1
        self.cur.redirs.append(r)

    def word(self, w: Word) -> None:
        if not self.cur.words:
            if self._command_head(w):
                return
            self.cur.depth = self.depth
        self.cur.words.append(w)
        self.k += 1

    def _command_head(self, w: Word) -> bool:
        """A word before the command's name: a reserved word, ``function NAME`` or an assignment.
        True if it was one (and was consumed)."""
        cur = self.cur
        lit = w.literal()
        if lit in _RESERVED_PREFIX and not cur.assigns:
            if lit == "{":
                self.depth += 1
                self.groups.append(0)
        elif lit in _RESERVED_ALONE and not cur.assigns:
            if lit == "}":
                self._close_group()
        elif lit == "function" and self._next_is("word"):
            self._function()
            return True
        else:
            a = _is_assignment(w)
            if a is None:
                return False
            cur.assigns.append(a)
        self.k += 1
        return True

    def _function(self) -> None:
        """``function NAME [()]``: the definition is a command of its own."""
        name_word = self.toks[self.k + 1].word
        assert name_word is not None
        self.cur.funcdef = name_word.literal() or "?"
        self.cur.words = [name_word]
        self.k += 2
        if self.k + 1 < len(self.toks) and self.toks[self.k].kind == "op" and self.toks[self.k].op == "(":
            self.k += 2
        self.finish(True)


def word_strings(cmd: Command) -> list[str]:
    """Words with expansions rendered as UNKNOWN (for quick checks without context)."""
    out: list[str] = []
    for w in cmd.words:
        out.append("".join(p.text if p.kind == "lit" else UNKNOWN for p in w.parts))
    return out
