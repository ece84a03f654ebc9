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


def _match_brace(s: str, i: int) -> int:
    """``s[i]`` is ``{`` of ``${``; return the index of the matching ``}``."""
    return _match_close(s, i, "{", "}", shell_code=False)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(s: str, i: int) -> tuple[str, int]:  # noqa: C901 - to split into named steps (issue 12)
    """``s[i:]`` starts after ``$'``; decode to the closing quote."""
    out: list[str] = []
    n = len(s)
    while i < n:
        c = s[i]
        if c == "'":
            return "".join(out), i + 1
        if c == "\\" and i + 1 < n:
            d = s[i + 1]
            if d in _ANSI:
                out.append(_ANSI[d])
                i += 2
                continue
            if d == "x":
                j = i + 2
                while j < n and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                    j += 1
                out.append(chr(int(s[i + 2:j], 16)) if j > i + 2 else "\\x")
                i = j
                continue
            if d in "uU":
                j = i + 2
                lim = i + (6 if d == "u" else 10)
                while j < n and j < lim and s[j] in "0123456789abcdefABCDEF":
                    j += 1
                try:
                    out.append(chr(int(s[i + 2:j], 16)) if j > i + 2 else "\\" + d)
                except (ValueError, OverflowError):
                    out.append(UNKNOWN)
                i = j
                continue
            if d in "01234567":
                j = i + 1
                while j < n and j < i + 4 and s[j] in "01234567":
                    j += 1
                out.append(chr(int(s[i + 1:j], 8) & 0xFF))
                i = j
                continue
            if d == "c" and i + 2 < n:
                out.append(chr(ord(s[i + 2]) & 0x1F))
                i += 3
                continue
            out.append("\\" + d)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out), n


def _dollar(s: str, i: int, quoted: bool, parts: list[Part]) -> int:  # noqa: C901 - to split into named steps (issue 12)
    """``s[i]`` is ``$``; append the expansion part, return the next index."""
    n = len(s)
    nxt = s[i + 1] if i + 1 < n else ""
    if nxt == "(":
        if s.startswith("$((", i):
            end = match_paren(s, i + 1)
            parts.append(Part("arith", s[i + 3:max(i + 3, end - 1)], quoted))
            return end + 1
        end = match_paren(s, i + 1)
        parts.append(Part("sub", s[i + 2:end], quoted))
        return end + 1
    if nxt == "{":
        end = _match_brace(s, i + 1)
        body = s[i + 2:end]
        name = ""
        k = 0
        if body[:1] in ("#", "!") and len(body) > 1:
            k = 1
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
            i = _dollar(s, i, True, parts)
            continue
        if c == "`":
            flush()
            end = _skip_backtick(s, i)
            parts.append(Part("sub", _unbacktick(s[i + 1:end - 1] if end <= n and s[end - 1:end] == "`" else s[i + 1:end]), True))
            i = end
            continue
        buf.append(c)
        i += 1
    flush()
    return n


def _unbacktick(inner: str) -> str:
    return inner.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\")


def _word(s: str, i: int) -> tuple[Word, int]:  # noqa: C901 - to split into named steps (issue 12)
    start = i
    n = len(s)
    parts: list[Part] = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            parts.append(Part("lit", "".join(buf), False))
            buf.clear()

    while i < n:
        c = s[i]
        if c in _META:
            # `arr=(a b)` array assignment: keep the parenthesised list inside the word
            if c == "(" and buf and buf[-1] == "=" and not parts:
                end = match_paren(s, i)
                buf.append(s[i:end + 1])
                i = end + 1
                continue
            break
        if c == "\\":
            if i + 1 < n and s[i + 1] == "\n":
                i += 2
                continue
            flush()
            if i + 1 < n:
                parts.append(Part("lit", s[i + 1], True))
            i += 2
            continue
        if c == "'":
            flush()
            end = _skip_single(s, i)
            parts.append(Part("lit", s[i + 1:end - 1] if s[end - 1:end] == "'" and end - 1 > i else s[i + 1:end], True))
            i = end
            continue
        if c == '"':
            flush()
            i = _double(s, i, parts)
            continue
        if c == "$":
            flush()
            i = _dollar(s, i, False, parts)
            continue
        if c == "`":
            flush()
            end = _skip_backtick(s, i)
            inner = s[i + 1:end - 1] if s[end - 1:end] == "`" and end - 1 > i else s[i + 1:end]
            parts.append(Part("sub", _unbacktick(inner), False))
            i = end
            continue
        if c == "~" and i == start:
            j = i + 1
            while j < n and s[j] not in _META and s[j] not in "/\"'$`\\":
                j += 1
            parts.append(Part("tilde", s[i + 1:j]))
            i = j
            continue
        if c == "~" and not parts and buf and buf[-1] in "=:" and "=" in buf:
            flush()
            j = i + 1
            while j < n and s[j] not in _META and s[j] not in "/\"'$`\\:":
                j += 1
            parts.append(Part("tilde", s[i + 1:j]))
            i = j
            continue
        buf.append(c)
        i += 1
    flush()
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


def tokenize(s: str) -> list[_Tok]:  # noqa: C901 - to split into named steps (issue 12)
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
            continue
        if c == "\\" and s.startswith("\\\n", i):
            i += 2
            continue
        if c == "#" and at_word_start:
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\n":
            toks.append(_Tok("op", op="\n"))
            i += 1
            if pending:
                i = _read_heredocs(s, i, pending)
                pending = []
            at_word_start = True
            continue
        if c in "<>" and s.startswith("(", i + 1):
            end = match_paren(s, i + 1)
            toks.append(_Tok("word", Word([Part("proc", s[i + 2:end], False, c)], s[i:end + 1])))
            i = end + 1
            at_word_start = False
            continue
        fd = ""
        if c.isdigit():
            j = i
            while j < n and s[j].isdigit():
                j += 1
            if j < n and s[j] in "<>" and not s.startswith("(", j + 1):
                fd = s[i:j]
                i = j
                c = s[i]
        if c in "&|;()<>" or c == "\n":
            for op in _OPS:
                if s.startswith(op, i):
                    break
            else:  # pragma: no cover - every meta char is an op
                op = c
            i += len(op)
            if op in _REDIR_OPS:
                toks.append(_Tok("redir", op=op, fd=fd))
            else:
                toks.append(_Tok("op", op=op))
            at_word_start = True
            continue
        w, i = _word(s, i)
        at_word_start = False
        tok = _Tok("word", w)
        toks.append(tok)
        if len(toks) >= 2 and toks[-2].kind == "redir" and toks[-2].op in ("<<", "<<-"):
            r = Redir(toks[-2].op)
            delim = "".join(p.text for p in w.parts)
            pending.append((r, delim, toks[-2].op == "<<-"))
            r.heredoc_quoted = w.quoted
            tok.op = "heredoc-delim"
            tok.word = w
            # remember the Redir on the token so the parser can attach the body
            tok.fd = str(len(_HEREDOC_REGISTRY))
            _HEREDOC_REGISTRY.append(r)
    if pending:
        for r, _d, _s in pending:
            r.heredoc = ""
    return toks


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
    if not (name[0].isalpha() or name[0] == "_") or not all(ch.isalnum() or ch == "_" for ch in name):
        return None
    rest = [Part("lit", head[eq + 1:], False)] if head[eq + 1:] else []
    return name, Word(rest + w.parts[1:], w.raw[w.raw.find("=") + 1:])


def parse(text: str) -> Script:  # noqa: C901 - to split into named steps (issue 12)
    """Split ``text`` into commands. Never raises."""
    _HEREDOC_REGISTRY.clear()
    toks = tokenize(text)
    registry = list(_HEREDOC_REGISTRY)
    script = Script()
    pipeline = 0
    stage = 0
    depth = 0
    cur = Command(pipeline=pipeline, stage=stage, depth=depth)
    k = 0

    def finish(next_pipeline: bool, background: bool = False) -> None:
        nonlocal cur, pipeline, stage
        if cur.words or cur.redirs or cur.assigns:
            cur.background = background
            script.commands.append(cur)
            if next_pipeline:
                pipeline += 1
                stage = 0
            else:
                stage += 1
        elif next_pipeline and stage:
            pipeline += 1
            stage = 0
        cur = Command(pipeline=pipeline, stage=stage, depth=depth)

    while k < len(toks):
        t = toks[k]
        if t.kind == "op":
            op = t.op
            if op in ("|", "|&"):
                finish(False)
            elif op == "(":
                # `name ( )` is a function definition
                if (len(cur.words) == 1 and k + 1 < len(toks) and toks[k + 1].kind == "op"
                        and toks[k + 1].op == ")"):
                    lit = cur.words[0].literal()
                    cur.funcdef = lit if lit is not None else "?"
                    k += 2
                    finish(True)
                    continue
                finish(True)
                depth += 1
                cur.depth = depth
            elif op == ")":
                finish(True)
                depth = max(0, depth - 1)
                cur.depth = depth
            else:
                finish(True, background=(op == "&"))
            k += 1
            continue
        if t.kind == "redir":
            r = Redir(t.op, t.fd)
            if k + 1 < len(toks) and toks[k + 1].kind == "word":
                nt = toks[k + 1]
                if nt.op == "heredoc-delim":
                    r = registry[int(nt.fd)]
                    r.fd = t.fd
                r.target = nt.word
                k += 2
            else:
                k += 1
            cur.redirs.append(r)
            continue
        w = t.word
        assert w is not None
        lit = w.literal()
        if not cur.words:
            if lit in _RESERVED_PREFIX and not cur.assigns:
                if lit == "{":
                    depth += 1
                k += 1
                continue
            if lit in _RESERVED_ALONE and not cur.assigns:
                if lit == "}":
                    finish(True)
                    depth = max(0, depth - 1)
                    cur.depth = depth
                k += 1
                continue
            if lit == "function" and k + 1 < len(toks) and toks[k + 1].kind == "word":
                name = toks[k + 1].word.literal() if toks[k + 1].word else None  # type: ignore[union-attr]
                cur.funcdef = name or "?"
                cur.words = [toks[k + 1].word]  # type: ignore[list-item]
                k += 2
                if k + 1 < len(toks) and toks[k].kind == "op" and toks[k].op == "(":
                    k += 2
                finish(True)
                continue
            a = _is_assignment(w)
            if a is not None:
                cur.assigns.append(a)
                k += 1
                continue
        if not cur.words:
            cur.depth = depth
        cur.words.append(w)
        k += 1
    finish(True)
    return script


def word_strings(cmd: Command) -> list[str]:
    """Words with expansions rendered as UNKNOWN (for quick checks without context)."""
    out: list[str] = []
    for w in cmd.words:
        out.append("".join(p.text if p.kind == "lit" else UNKNOWN for p in w.parts))
    return out
