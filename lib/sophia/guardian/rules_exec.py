"""Code that runs code: shells (-c, stdin), eval/source, interpreter one-liners, downloads that get
executed (curl | sh), and secrets that flow to the network."""

from __future__ import annotations

import re

from . import code as codemod
from . import targets
from .fields import BLANK
from .lazyre import LazyRe
from .shell import UNKNOWN, Command
from .wrappers import NET_FETCHERS, SHELLS, Invocation, interpreter, strip

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable

    from .analyze import Analyzer, Call, Stdin

NET_SENDERS = frozenset({"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "http",
                         "https", "xh", "mail", "mailx", "sendmail", "mutt", "openssl", "ssh", "rsync", "rclone",
                         "s3cmd", "curlie", "httpie", "wormhole", "croc", "transfer"})
# Official install scripts of developer toolchains (the vendor's own instructions pipe them into a shell;
# they install into the user's home like a package would). Only these, over https, pass `curl ... | sh`;
# any other script from the network piped into a shell is denied (a user adds their own with
# `guardian.allow`). A prefix ending in "/" covers the paths below it; otherwise the URL must be exact.
TRUSTED_INSTALLERS = (
    "https://sh.rustup.rs", "https://astral.sh/uv/", "https://astral.sh/ruff/", "https://install.python-poetry.org",
    "https://bun.sh/install", "https://deno.land/install.sh", "https://get.pnpm.io/install.sh",
    "https://raw.githubusercontent.com/Homebrew/install/", "https://raw.githubusercontent.com/nvm-sh/nvm/",
    "https://claude.ai/install.sh", "https://pyenv.run", "https://mise.run", "https://get.volta.sh",
    "https://fnm.vercel.app/install", "https://pixi.sh/install.sh", "https://get.sdkman.io",
)
_UNSAFE_FETCH_OPTS = frozenset({"--insecure", "--no-check-certificate", "-x", "--proxy", "-K", "--config",
                                "--resolve", "--connect-to", "-e", "--execute"})
FETCH_INSTEAD = ("Download to a file, show it to the user for review, and only run it once they approve "
                 "(or install through a package manager).")
_ENV_DUMPERS = frozenset({"env", "printenv", "set", "export", "declare", "compgen"})
_SECRET_VAR = LazyRe(r"(?i)(?:TOKEN|SECRET|PASSW(?:OR)?D|API_?KEY|PRIVATE|CREDENTIAL|ACCESS_?KEY|AUTH)")
_CODE_OPTS = {
    "python": ("-c",), "js": ("-e", "--eval", "-p", "--print"), "ruby": ("-e",), "perl": ("-e", "-E"),
    "php": ("-r",), "lua": ("-e",), "r": ("-e",), "applescript": ("-e",), "ps": ("-c", "-Command", "-command"),
    "tcl": (), "awk": (),
}


# -- secrets -----------------------------------------------------------------------------------


def reads_secret(a: Analyzer, inv: Invocation, cmd: Command | None) -> str:
    """What secret this command reads ('' if none)."""
    if inv.name in ("echo", "printf"):
        return ""  # what they print is judged as text, not as a read
    return _secret_tool(inv) or _secret_arg(a, inv) or (_secret_redirect(a, cmd) if cmd is not None else "")


def _secret_tool(inv: Invocation) -> str:
    """The secret a command prints by what it is: the environment, GPG keys, a keychain, a token."""
    if inv.name in _ENV_DUMPERS and not inv.args or inv.name in ("env", "printenv") and all(
            x.startswith("-") for x in inv.args):
        return "the environment (API keys and tokens)"
    if inv.name == "gpg" and any(x.startswith("--export-secret") for x in inv.args):
        return "GPG secret keys"
    if inv.name == "security" and any(x.startswith("find-") and "password" in x for x in inv.args):
        return "a keychain password"
    if inv.name == "gh" and inv.args[:2] == ["auth", "token"]:
        return "the GitHub token"
    if inv.name == "aws" and "export-credentials" in inv.args:
        return "AWS credentials"
    return ""


def _secret_arg(a: Analyzer, inv: Invocation) -> str:
    """An argument (or an option's ``=value``, or an ``@file``) naming a secret file."""
    for x in inv.args:
        val = x.split("=", 1)[1] if x.startswith("-") and "=" in x else x
        val = val.lstrip("@")
        if not val or val.startswith("-") and val != "-":
            continue
        rp = targets.resolve(a.ctx, val) if UNKNOWN not in val else None
        if rp and (targets.is_secret_path(rp) or rp in ("/proc/self/environ",)):
            return val
    return ""


def _secret_redirect(a: Analyzer, cmd: Command) -> str:
    """A secret file redirected into the command's standard input."""
    for r in cmd.redirs:
        if r.op == "<" and r.target is not None:
            v = a.expand(r.target)[0]
            if targets.secret_at(a.ctx, v):
                return v
    return ""


def _arg_secret(a: Analyzer, call: Call) -> str:
    """A secret embedded in the arguments: $(cat .env), $SECRET_TOKEN in data, @file uploads."""
    return _subs_secret(a, call.cmd)


def _subs_secret(a: Analyzer, cmd: Command) -> str:
    """The first secret a ``$(...)``/``<(...)`` in the command's words reads."""
    for w in cmd.words:
        for p in w.parts:
            if p.kind in ("sub", "proc"):
                _f, s = a.sub_info(p.text)
                if s:
                    return s
    return ""


def _data_args(call: Call) -> list[tuple[str, str]]:
    """(option, value) pairs of a sender that carry uploaded data."""
    out = []
    args = call.args
    data_opts = ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "-F", "--form",
                 "-T", "--upload-file", "--json", "--post-data", "--post-file", "--body-file", "--body-data")
    for i, x in enumerate(args):
        for o in data_opts:
            if x == o and i + 1 < len(args):
                out.append((o, args[i + 1]))
            elif x.startswith(o + "=") and o.startswith("--"):
                out.append((o, x[len(o) + 1:]))
            elif o in ("-d", "-F", "-T") and x.startswith(o) and len(x) > 2 and not x.startswith("--"):
                out.append((o, x[2:]))
    return out


def exfiltration(a: Analyzer, call: Call) -> None:
    if call.name not in NET_SENDERS and not _dev_tcp(a, call):
        return
    what = _exfil_what(a, call)
    if what:
        a.add("deny", "secret_exfil", f"`{call.show()}` {what}",
              "Never send keys, tokens or .env contents off the machine; ask the user.")


def _exfil_what(a: Analyzer, call: Call) -> str:
    """What secret a network sender sends off the machine, as "sends X ..." ('' if none)."""
    if _dev_tcp(a, call):
        s0 = reads_secret(a, call.inv, None) or _arg_secret(a, call)
        if s0:
            return f"sends {s0} to a network socket"
    if call.stdin.secret:
        return f"sends {call.stdin.secret} over the network"
    s = _arg_secret(a, call)
    if s and call.name != "ssh":
        return f"sends {s} over the network"
    f = _uploaded_secret(a, call)
    if f:
        return f"uploads {f}"
    if _mentions_secret_var(call):
        return "sends a secret environment variable"
    f = _copied_secret(a, call)
    if f:
        return f"copies {f} to another machine"
    return ""


def _uploaded_secret(a: Analyzer, call: Call) -> str:
    """A secret file uploaded by a data option (``-d @.env``, ``-T ~/.ssh/id_rsa``)."""
    for opt, val in _data_args(call):
        for piece in re.split(r"[=;,]", val):
            piece = piece.strip()
            if piece.startswith(("@", "<")) or opt in ("-T", "--upload-file", "--post-file", "--body-file"):
                f = piece.lstrip("@<")
                if f and UNKNOWN not in f and targets.secret_at(a.ctx, f):
                    return f
    return ""


def _copied_secret(a: Analyzer, call: Call) -> str:
    """A secret file or sensitive home path a copy tool sends to another machine."""
    if call.name not in ("scp", "rsync", "rclone", "s3cmd", "sftp", "croc", "wormhole", "transfer"):
        return ""
    from .rules_fs import rsync_dry_run

    if call.name == "rsync" and rsync_dry_run(call.args):
        return ""  # lists what it would send, sends nothing
    pos = [x for x in call.args if not x.startswith("-")]
    remote_dest = len(pos) >= 2 and (re.match(r"^[\w.@-]+:", pos[-1]) is not None or "://" in pos[-1])
    if not remote_dest and call.name not in ("croc", "wormhole", "transfer"):
        return ""
    for s_ in pos[:-1] if remote_dest else pos:
        rp = targets.resolve(a.ctx, s_) if UNKNOWN not in s_ else None
        if rp and (targets.is_secret_path(rp) or targets.zone(a.ctx, rp).kind == "home_sensitive"):
            return s_
    return ""


_DATA_OPTS = ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "-F", "--form",
              "--json", "--post-data", "--body-data", "--form-string")


def _mentions_secret_var(call: Call) -> bool:
    """A secret-named variable expanded into uploaded data or a URL (not a header/credential option)."""
    words = call.cmd.words
    for i, w in enumerate(words):
        if not any(p.kind == "var" and _SECRET_VAR.search(p.text) for p in w.parts):
            continue
        prev = (words[i - 1].literal() or "") if i else ""
        head = w.parts[0].text if w.parts and w.parts[0].kind == "lit" else ""
        if prev in _DATA_OPTS or head.startswith(tuple(o + "=" for o in _DATA_OPTS if o.startswith("--"))) \
                or head.startswith(("-d", "-F")) or "://" in head or call.name in ("nc", "ncat", "netcat", "socat",
                                                                                 "telnet"):
            return True
    return False


def _dev_tcp(a: Analyzer, call: Call) -> bool:
    for r in call.cmd.redirs:
        if r.target is not None and r.op in (">", ">>", "<>", "&>") and "/dev/tcp/" in (r.target.raw or ""):
            return True
    return False


def producer_info(a: Analyzer, prev: list[Command]) -> Stdin:
    """Describe what earlier pipeline stages write into the next one."""
    from .analyze import Stdin

    info = Stdin("unknown")
    for c in prev:
        words = [v for w in c.words for v in a.expand(w)[:1]]
        inv = strip(words)
        sec = reads_secret(a, inv, c) or _subs_secret(a, c)
        if sec:
            info.secret = sec
        if inv.name in NET_FETCHERS and not _fetch_writes_file(inv):
            info.trusted = trusted_fetch(inv) and (info.kind != "net" or info.trusted)
            info.kind = "net"
        elif info.kind != "net":  # once the network flows in, later stages pass it on
            stage_output(a, c, inv, info)
        elif inv.name != "tee":
            info.trusted = False  # an installer edited on its way (`| sed ... | sh`) is no longer the vendor's
    return info


_REDIS_CLIS = ("redis-cli", "valkey-cli", "keydb-cli")
_FILTERS = frozenset({"tee", "grep", "sed", "sort", "uniq", "head", "tail", "cut", "awk", "tr", "xxd", "base64",
                      "gzip", "bzip2", "xz", "tar", "zip", "openssl", "gpg"})


def stage_output(a: Analyzer, c: Command, inv: Invocation, info: Stdin) -> None:
    """What one pipeline stage writes: known text, a file list (find/ls), redis keys, or unknown."""
    from .rules_fs import find_roots, narrows

    if inv.name in ("echo", "printf"):
        _echo_output(c, inv, info)
    elif inv.name == "cat" and not inv.args:
        for r in c.redirs:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                info.kind = "text"
                info.text = r.heredoc if r.heredoc_quoted else a._expand_text(r.heredoc)
    elif inv.name == "find":
        roots, expr = find_roots(inv.args)
        info.kind = "find"
        info.roots = roots
        info.filtered = narrows(expr)
    elif inv.name in _REDIS_CLIS and ("--scan" in inv.args or any(x.upper() == "KEYS" for x in inv.args)):
        info.kind = "redis_keys"  # roots: the key pattern listed
        args = list(inv.args)
        pats = [args[k + 1] for k, x in enumerate(args[:-1]) if x == "--pattern" or x.upper() == "KEYS"]
        info.roots = pats or ["*"]
    elif inv.name == "ls":
        info.kind = "ls"
        info.roots = [x for x in inv.args if not x.startswith("-")]
    elif interpreter(inv.name) == "awk" and _awk_prints(inv, info):
        return
    elif inv.name in ("base64", "xxd", "basenc") and info.kind == "text":
        info.text = _decoded(inv, info.text)
    elif inv.name not in _FILTERS:  # filters keep what flows (secret / net)
        info.kind = "unknown"


def _decoded(inv: Invocation, text: str) -> str:
    """``echo <base64> | base64 -d`` (``xxd -r -p`` for hex): the text that comes out (encoding, or a
    text that does not decode, is UNKNOWN)."""
    import binascii

    args = inv.args
    try:
        if inv.name in ("base64", "basenc") and any(x in ("-d", "--decode", "-D") or x.startswith("-d") for x in args):
            return binascii.a2b_base64("".join(text.split())).decode("utf-8", "replace")
        if inv.name == "xxd" and "-r" in args and any(x.startswith("-p") for x in args):
            return binascii.unhexlify("".join(text.split())).decode("utf-8", "replace")
    except (ValueError, binascii.Error):
        pass
    return UNKNOWN


def _awk_prints(inv: Invocation, info: Stdin) -> bool:
    """An awk program that prints literal text (``{print "rm -rf " $1}``): that text flows on."""
    from . import awk

    codes = _awk_args(inv.args)[0]
    text = awk.printed(codes[0], awk.variables(inv.args)) if codes else None
    if text is None:
        return False
    info.kind = "text"
    info.text = text
    return True


def _echo_output(c: Command, inv: Invocation, info: Stdin) -> None:
    """The text echo/printf writes (a secret-named variable in it is a secret that flows)."""
    for w in c.words:
        for p in w.parts:
            if p.kind == "var" and _SECRET_VAR.search(p.text):
                info.secret = info.secret or f"${p.text}"
    info.kind = "text"
    info.text = printed_text(inv.name, inv.args)


def printed_text(name: str, args: list[str]) -> str:
    """What ``echo ARGS`` or ``printf ARGS`` prints."""
    args = list(args)
    if name == "echo":
        escapes = False
        while args and len(args[0]) > 1 and args[0][0] == "-" and all(c in "neE" for c in args[0][1:]):
            escapes = escapes or "e" in args.pop(0)  # echo's only options; anything else (-delete, --) is printed
        return _c_escapes(" ".join(args)) if escapes else " ".join(args)
    if args[:1] == ["--"]:
        args.pop(0)
    if not args or args[0] == "-v":
        return ""  # printf -v VAR: into a variable
    return _printf_text(args)


_PRINTF_CONV = LazyRe(r"%[-+ #0]*[0-9]*(?:\.[0-9]+)?[sbdiouxXcfeEgGq]")
_C_ESCAPE = LazyRe(r"\\(x[0-9a-fA-F]{1,2}|0?[0-7]{1,3}|[nte\\])")
_C_CHARS = {"n": "\n", "t": "\t", "e": "\x1b", "\\": "\\"}


def _c_escapes(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        c = chr(int(e[1:], 16)) if e[0] == "x" else chr(int(e, 8) & 0xFF) if e[0].isdigit() else _C_CHARS[e]
        return "\n" if c == "\x00" else c  # a NUL separates (xargs -0); it never reaches an argument

    return _C_ESCAPE.sub(one, text) if "\\" in text else text


def _printf_text(args: list[str]) -> str:
    """printf FORMAT ARGS: the format is reused until every argument is used (as printf does)."""
    fmt = _c_escapes(args[0].replace("%%", "\x06pct"))
    vals = args[1:]
    pieces = _PRINTF_CONV.split(fmt)
    if len(pieces) == 1:
        return fmt.replace("\x06pct", "%")
    out: list[str] = []
    while True:
        out.append(pieces[0])
        for piece in pieces[1:]:
            out.append(_c_escapes(vals.pop(0)) if vals else "")
            out.append(piece)
        if not vals:
            return "".join(out).replace("\x06pct", "%")


def _fetch_writes_file(inv: Invocation) -> bool:
    args = inv.args
    if inv.name == "curl":
        return any(x in ("-o", "--output", "-O", "--remote-name", "--remote-name-all", "-J") or
                   re.match(r"^-[a-zA-Z]*[oO]", x) is not None and not x.startswith("--") for x in args) and \
            not _curl_stdout(args)
    if inv.name == "wget":
        for i, x in enumerate(args):
            if x in ("-O", "--output-document") and i + 1 < len(args):
                return args[i + 1] != "-"
            if x.startswith("--output-document="):
                return x.split("=", 1)[1] != "-"
            if re.match(r"^-[a-zA-Z]*O-?$", x):
                return not x.endswith("-") and not (i + 1 < len(args) and args[i + 1] == "-")
        return True
    return False


def _curl_stdout(args: list[str]) -> bool:
    for i, x in enumerate(args):
        if x in ("-o", "--output") and i + 1 < len(args) and args[i + 1] == "-":
            return True
    return False


def trusted_fetch(inv: Invocation) -> bool:
    """Whether a curl/wget call fetches only official installer scripts (TRUSTED_INSTALLERS), verified."""
    if inv.name not in ("curl", "wget"):
        return False
    urls = [x for x in inv.args if "://" in x]
    insecure = any(x in _UNSAFE_FETCH_OPTS or (inv.name == "curl" and re.match(r"^-[a-zA-Z]*k", x)) for x in inv.args)
    return bool(urls) and not insecure and all(_trusted_url(u) for u in urls)


def _trusted_url(url: str) -> bool:
    if UNKNOWN in url or any(x in url for x in ("..", "%", "@", "\\")):  # no escape from the prefix
        return False
    return any(url.startswith(p) if p.endswith("/") else url in (p, p + "/") for p in TRUSTED_INSTALLERS)


def _download_targets(a: Analyzer, inv: Invocation) -> list[str]:
    args = inv.args
    out = []
    urls = [x for x in args if re.match(r"^(?:https?|ftp)://", x)]
    for i, x in enumerate(args):
        if x in ("-o", "--output", "-O", "--output-document") and i + 1 < len(args):
            if not (inv.name == "curl" and x == "-O"):
                out.append(args[i + 1])
        elif x.startswith(("--output=", "--output-document=")):
            out.append(x.split("=", 1)[1])
        elif inv.name == "curl" and re.match(r"^-[a-zA-Z]*o$", x) and i + 1 < len(args):
            out.append(args[i + 1])
    if (inv.name == "wget" and not out) or (inv.name == "curl" and any(
            x in ("-O", "--remote-name") or re.match(r"^-[a-zA-Z]*O", x) for x in args) and not out):
        for u in urls:
            name = u.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
            if name:
                out.append(name)
    resolved = []
    for o in out:
        rp = targets.resolve(a.ctx, o)
        if rp:
            resolved.append(rp)
    return resolved


def fetcher(a: Analyzer, call: Call) -> None:
    from .rules_fs import judge_write

    for p in _download_targets(a, call.inv):
        a.ctx.downloaded.add(p)
        judge_write(a, p, f"`{call.show()}`")


def downloaded_exec(a: Analyzer, call: Call) -> None:
    """Running a file downloaded earlier in the same command line."""
    if not a.ctx.downloaded:
        return
    cand = []
    if call.inv.argv0 and ("/" in call.inv.argv0):
        cand.append(call.inv.argv0)
    if call.name in SHELLS or interpreter(call.name) or call.name in ("source", ".", "chmod"):
        cand += [x for x in call.args if not x.startswith("-")][:2]
    for c in cand:
        rp = targets.resolve(a.ctx, c)
        if rp in a.ctx.downloaded:
            if call.name == "chmod":
                continue
            a.add("deny", "curl_pipe", f"`{call.show()}` runs {c}, downloaded a moment before without review",
                  FETCH_INSTEAD)
            return


# -- shells and interpreters --------------------------------------------------------------------


def _stdin_code(a: Analyzer, call: Call, lang: str) -> None:
    st = call.stdin
    via = f"`{call.show()}`"
    if st.kind == "net" and not st.trusted:
        a.add("deny", "curl_pipe", f"{via} runs code straight from the network", FETCH_INSTEAD)
    elif st.kind == "text":
        if lang == "sh":
            a.script(st.text, call.depth + 1)
        else:
            code(a, st.text, lang, call.depth + 1, via)


def shell(a: Analyzer, call: Call) -> None:
    args = call.args
    if call.name == "busybox":
        inv = strip(args)
        if inv.name:
            return
    i, cstr = _shell_options(args)
    via = f"`{call.show()}`"
    if cstr is not None:
        with_positional(a, args[i:], lambda: _run_string(a, call, cstr, "sh", via))
        if cstr.strip(" \"'") == UNKNOWN:
            for x in args[i:]:  # `sh -c "$1" _ 'rm -rf ~'`: the code is one of its arguments
                a.script(x, call.depth + 1)
        return
    script_args = args[i:]
    if not script_args or script_args[0] == "-" or "-s" in args[:i]:
        _stdin_code(a, call, "sh")
        return
    if any(x.startswith("-") and not x.startswith("--") and "n" in x for x in args[:i]):
        return  # `bash -n x.sh`: reads the script, runs nothing
    _run_file_word(a, call, i, via)


def _shell_options(args: list[str]) -> tuple[int, str | None]:
    """Past a shell's options: (index of its first operand, the ``-c`` string or None)."""
    i = 0
    while i < len(args):
        x = args[i]
        if x == "--":
            return i + 1, None
        if x.startswith("-") and not x.startswith("--") and "c" in x[1:] and len(x) > 1 or x == "-c":
            return i + 2, args[i + 1] if i + 1 < len(args) else None
        if x in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if x.startswith(("-", "+")):
            i += 1
            continue
        break
    return i, None


def with_positional(a: Analyzer, positional: list[str], judge: Callable[[], None]) -> None:
    """Run ``judge`` with ``$0``, ``$1`` ... ``$@`` set to the arguments after a ``-c`` string
    (``bash -c 'rm -rf "$1"' _ /`` deletes ``/``), as the inner shell sees them."""
    saved = a.ctx.vars
    inner = {k: v for k, v in saved.items() if not (k.isdigit() or k in ("@", "*", "#"))}
    for k, v in enumerate(positional[:10]):
        inner[str(k)] = v
    rest = positional[1:]
    inner["@"] = inner["*"] = BLANK.join(rest[:16])  # "$@" is one word per argument (fields.py)
    inner["#"] = str(len(rest))
    a.ctx.vars = inner
    try:
        judge()
    finally:
        a.ctx.vars = saved


def _run_file_word(a: Analyzer, call: Call, idx: int, via: str, lang: str = "sh") -> None:
    """The script argument: a process substitution is judged by where its text comes from; a file, by
    what it runs (:mod:`.scripts`)."""
    words = call.cmd.words
    offset = len(words) - len(call.args)
    k = offset + idx
    procs = [p for p in words[k].parts if p.kind == "proc"] if 0 <= k < len(words) else []
    for p in procs:
        fetch, _s = a.sub_info(p.text)
        if fetch:
            a.add("deny", "curl_pipe", f"{via} runs a script straight from the network", FETCH_INSTEAD)
        else:
            out = a.sub_value(p.text)
            a.script(out if out != UNKNOWN else "", call.depth + 1)
    if not procs and idx < len(call.args) and lang in ("sh", "python", "js"):
        from .scripts import run_file

        run_file(a, call, call.args[idx], call.args[idx + 1:], lang)


def _run_string(a: Analyzer, call: Call, text: str, lang: str, via: str) -> None:
    """A string that will run as code: analyse it; judge what unknown parts come from."""
    if UNKNOWN in text:
        for w in call.cmd.words:
            for p in w.parts:
                if p.kind in ("sub", "proc"):
                    fetch, _s = a.sub_info(p.text)
                    if fetch:
                        a.add("deny", "curl_pipe", f"{via} runs code fetched from the network", FETCH_INSTEAD)
                        return
    if lang == "sh":
        a.script(text, call.depth + 1)
    else:
        code(a, text, lang, call.depth + 1, via)


def eval_(a: Analyzer, call: Call) -> None:
    text = " ".join(call.args)
    via = f"`{call.show()}`"
    if text.strip() == UNKNOWN or text.strip().strip('"') == UNKNOWN:
        subs = [p for w in call.cmd.words for p in w.parts if p.kind == "sub"]
        if subs:
            for p in subs:
                fetch, _s = a.sub_info(p.text)
                if fetch:
                    a.add("deny", "curl_pipe", f"{via} evaluates code fetched from the network", FETCH_INSTEAD)
            return
        a.add("ask", "eval", f"{via} evaluates a command only known at run time",
              "Run the command directly so it can be checked.")
        return
    _run_string(a, call, text, "sh", via)


def source(a: Analyzer, call: Call) -> None:
    via = f"`{call.show()}`"
    if call.args and call.args[0] in ("/dev/stdin", "-"):
        _stdin_code(a, call, "sh")
        return
    _run_file_word(a, call, 0, via)


def su(a: Analyzer, call: Call) -> None:
    args = call.args
    for i, x in enumerate(args):
        if x in ("-c", "--command") and i + 1 < len(args):
            _run_string(a, call, args[i + 1], "sh", f"`{call.show()}`")
            return


def watch(a: Analyzer, call: Call) -> None:
    args = call.args
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-n", "--interval", "-d=", "-q") else 1
    if i < len(args):  # joined and run by sh -c, or (-x) run as the words it is given
        direct = any(x in ("-x", "--exec") or x.startswith("-") and not x.startswith("--") and "x" in x for x in args[:i])
        a.script(" ".join(shell_quote(x) for x in args[i:]) if direct else " ".join(args[i:]), call.depth + 1)


_SSH_OPTS = frozenset("bcDEeFIiJLlmOopQRSWw")


def ssh(a: Analyzer, call: Call) -> None:
    args = call.args
    i = 0
    while i < len(args):
        x = args[i]
        if x.startswith("-") and len(x) == 2 and x[1] in _SSH_OPTS:
            i += 2
            continue
        if x.startswith("-"):
            i += 1
            continue
        break
    rest = args[i + 1:]
    if rest:
        remote = a.ctx.copy()
        saved = a.ctx
        a.ctx = remote
        remote.cwd = remote.home
        remote.project = None
        remote.kit_dirs = ()
        try:
            a.script(" ".join(rest), call.depth + 1)
        finally:
            a.ctx = saved
    if call.stdin.kind == "text":
        a.script(call.stdin.text, call.depth + 1)


def interp(a: Analyzer, call: Call, lang: str) -> None:
    args = call.args
    via = f"`{call.show()}`"
    scan = _awk_args(args) if lang == "awk" else _interp_args(call, lang)
    if scan is None:
        return  # python -m: a module, not code to read
    codes, script_idx, inplace, end = scan
    if lang == "awk":
        from . import awk

        lines: list[str | None] = list(call.stdin.text.splitlines()[:4]) if call.stdin.kind == "text" else []
        if not codes and call.stdin.kind == "text" and _awk_program_file(args) in ("-", "/dev/stdin"):
            codes, lines = [call.stdin.text], []  # awk -f /dev/stdin <<< 'program'
        for c in codes:
            for record in lines or [None]:
                awk.judge(a, c, awk.variables(args), call.depth + 1, via, record)
        return
    if inplace:
        from .rules_fs import judge_write

        for f in args[end:]:
            if not f.startswith("-"):
                judge_write(a, f, via)
    for c in codes:
        _run_string(a, call, c, lang, via)
    if not codes:
        if script_idx is None or args[script_idx] == "-":
            _stdin_code(a, call, lang)
        else:
            _run_file_word(a, call, script_idx, via, lang)


# what an interpreter's arguments hold: inline code, the index of a script argument, whether perl edits
# files in place, and the index where option scanning stopped
_InterpArgs = tuple[list[str], int | None, bool, int]


def _awk_program_file(args: list[str]) -> str:
    """The file ``-f``/``--file`` names ('' if none)."""
    for i, x in enumerate(args):
        if x in ("-f", "--file") and i + 1 < len(args):
            return args[i + 1]
        if x.startswith("--file="):
            return x.split("=", 1)[1]
    return ""


def _awk_args(args: list[str]) -> _InterpArgs:
    """awk's program is its first non-option argument, or gawk's ``-e``/``--source`` text (none with ``-f``)."""
    i = 0
    codes: list[str] = []
    while i < len(args):
        x = args[i]
        if x in ("-e", "--source") and i + 1 < len(args):
            codes.append(args[i + 1])
        elif x.startswith("--source="):
            codes.append(x.split("=", 1)[1])
        elif x in ("-f", "--file") or x.startswith("--file="):
            return codes, None, False, i
        elif not x.startswith("-") or x == "-":
            return codes or [x], None, False, i
        elif x == "--":
            return codes or args[i + 1:i + 2], None, False, i
        i += 2 if x in ("-f", "-v", "-F", "-e", "--source", "--assign", "--field-separator", "-i", "-l") else 1
    return codes, None, False, i


def _interp_args(call: Call, lang: str) -> _InterpArgs | None:
    """Scan an interpreter's options for inline code (``-c``/``-e``...) or its script (None: ``python -m``)."""
    args = call.args
    opts = _CODE_OPTS.get(lang, ())
    codes: list[str] = []
    inplace = False
    i = 0
    while i < len(args):
        x = args[i]
        if lang == "js" and call.name == "deno" and x == "eval" and i + 1 < len(args):
            return [*codes, args[i + 1]], None, inplace, i
        if x in opts and i + 1 < len(args):
            codes.append(args[i + 1])
            i += 2
            continue
        glued = _glued_code(x, lang, opts)
        if glued is not None:
            codes.append(glued)
            i += 1
            continue
        if (re.match(r"^-[A-Za-z]{2,}$", x) and x[1] not in "MmIrW"
                and any(x.endswith(o[1:]) for o in opts if len(o) == 2)):
            # clustered flags ending with the code flag: perl -pie / -lne / python -Ic
            inplace = inplace or lang == "perl" and "i" in x[1:-1]
            codes += args[i + 1:i + 2]
            i += 2
            continue
        inplace = inplace or lang == "perl" and re.match(r"^-[a-zA-Z]*i", x) is not None
        if x in ("-m",) and lang == "python":
            return None
        if not x.startswith("-") or x == "-":
            return codes, i, inplace, i
        i += 2 if x in ("-W", "-X", "-r", "--require", "-I", "-M") and lang != "ruby" else 1
    return codes, None, inplace, i


# short options that take a value (glued or the next word), per language: a code letter after them is
# part of that value, not code (`perl -Mstrict`, `ruby -rsocket`, `python -W error`)
_VALUE_LETTERS = {"python": "mWXQ", "perl": "iIMmxdDC0", "ruby": "rICEFixWT0K", "js": "r", "php": "cdftz", "lua": "l"}


def _glued_code(x: str, lang: str, opts: tuple[str, ...]) -> str | None:
    """Code glued to its option, as getopt reads a cluster: ``python -c'...'``, ``perl -le'...'``,
    ``node --eval=...``; None when ``x`` carries none."""
    if lang == "js" and x.startswith(("--eval=", "--print=")):
        return x.split("=", 1)[1]
    if len(x) < 3 or x[0] != "-" or x[1] == "-" or lang not in _VALUE_LETTERS:
        return None
    for k in range(1, len(x)):
        c = x[k]
        if "-" + c in opts:
            return x[k + 1:] or None
        if c in _VALUE_LETTERS[lang] or not c.isalpha():
            return None
    return None


def code(a: Analyzer, text: str, lang: str, depth: int, via: str) -> None:
    """Judge inline interpreter code."""
    if codemod.is_fork_loop(text):
        a.add("deny", "forkbomb", f"{via} forks processes in an endless loop (a fork bomb)", "Do not run it.")
    reads: list[str] = []
    for c in codemod.calls(text):
        if c.kind == "read":
            if c.path:
                reads.append(c.path)
        elif c.kind == "shell":
            _code_shell(a, c, text, depth, via)
        elif c.kind == "write":
            _code_write(a, c, text, via)
        else:
            _code_delete(a, c, via)
    if reads and codemod.sends_over_network(text):
        secret = next((p for p in reads if targets.secret_at(a.ctx, targets.expand_tilde(a.ctx, p))), None)
        if secret:
            a.add("deny", "secret_exfil", f"{via} reads {secret} and sends data over the network",
                  "Never send credentials or keys anywhere; ask the user if something needs them.")
    if lang == "awk":
        from . import awk

        awk.judge(a, text, {}, depth + 1, via)
    else:
        from . import reverse_shell

        reverse_shell.code(a, text, via)


def _code_shell(a: Analyzer, c: codemod.CodeCall, text: str, depth: int, via: str) -> None:
    """Code that runs a shell command: the command when literal, else a look for rm -r/mkfs/dd in the code."""
    if c.shell is not None:
        a.script(c.shell, depth + 1)
    elif re.search(r"\brm\s+-[a-zA-Z]*[rR]|\bmkfs|\bdd\s", text):
        a.add("ask", "interp_rmtree", f"{via} builds a shell command at run time")


def _code_write(a: Analyzer, c: codemod.CodeCall, text: str, via: str) -> None:
    """Code that writes a file: judged like a redirection to that path. When the path is computed, a path
    the code names literally that a redirection could not write freely is suspect: the kit's own files
    are denied (an agent cannot switch the guardian off), others asked about."""
    from .rules_fs import judge_write

    if c.path is not None:
        judge_write(a, targets.expand_tilde(a.ctx, c.path), via)
        return
    for p in codemod.path_literals(text):
        path = targets.resolve(a.ctx, targets.expand_tilde(a.ctx, p))
        lv = targets.write_level(a.ctx, path) if path else None
        if not lv:
            continue
        if targets.zone(a.ctx, path).kind == "kit":
            judge_write(a, path or "", via)
        else:
            a.add("ask", "sensitive_write", f"{via} writes a file whose path is computed, and names {path}",
                  "Check which file it writes.")


def _code_delete(a: Analyzer, c: codemod.CodeCall, via: str) -> None:
    """Code that deletes a file or a tree."""
    from .rules_fs import judge_delete

    if c.path is not None:
        judge_delete(a, targets.expand_tilde(a.ctx, c.path), c.kind == "tree", via)
    elif c.kind == "tree":
        a.add("ask", "interp_rmtree", f"{via} deletes a directory tree whose path is computed at run time",
              "Use a literal path inside the project.")


_CONTAINER_OPTS = frozenset({"-u", "--user", "-e", "--env", "-w", "--workdir", "--env-file", "-c", "--container",
                             "-n", "--namespace", "--detach-keys", "--context", "--kubeconfig"})


def container(a: Analyzer, call: Call) -> None:
    """docker/podman exec CONTAINER cmd..., kubectl exec POD -- cmd...: judge the inner command."""
    args = call.args
    kube = call.name in ("kubectl", "oc")
    if not kube and _container_prune(a, call):
        return
    if not args or args[0] != "exec":
        return
    rest = args[1:]
    if kube and "--" in rest:
        inner = rest[rest.index("--") + 1:]
    else:
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            i += 2 if rest[i] in _CONTAINER_OPTS else 1
        inner = rest[i + 1:]
    if not inner:
        return
    remote = a.ctx.copy()
    remote.cwd = None
    remote.project = None
    remote.kit_dirs = ()
    saved = a.ctx
    a.ctx = remote
    try:
        a.script(" ".join(shell_quote(x) for x in inner), call.depth + 1)
    finally:
        a.ctx = saved


def _container_prune(a: Analyzer, call: Call) -> bool:
    """``docker system prune -a``/``--volumes``, ``docker volume prune|rm``: data and images gone for good."""
    pos = [x for x in call.args if not x.startswith("-")]
    flags = _short_flags_of(call.args)
    wide = "a" in flags or "--all" in call.args or "--volumes" in call.args
    if pos[:2] == ["system", "prune"] and wide or pos[:1] == ["volume"] and pos[1:2] in (["prune"], ["rm"]):
        a.add("ask", "container_prune", f"`{call.show()}` deletes container volumes or images for good",
              "Remove only named containers or images, or ask the user to run it.")
        return True
    return False


def _short_flags_of(args: list[str]) -> str:
    return "".join(x[1:] for x in args if x.startswith("-") and not x.startswith("--"))


def shell_quote(x: str) -> str:
    if x and all(c.isalnum() or c in "-_./=:@%+,~" for c in x):
        return x
    return "'" + x.replace("'", "'\\''") + "'"
