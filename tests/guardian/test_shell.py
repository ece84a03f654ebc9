"""The lexer/splitter on its own: quoting, escapes, continuations, substitutions, heredocs, pipelines."""

from __future__ import annotations

from sophia.guardian.shell import UNKNOWN, parse, word_strings


def words(text: str) -> list[list[str]]:
    return [word_strings(c) for c in parse(text).commands]


def test_separators_split_commands() -> None:
    assert words("a; b && c || d & e\nf") == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]


def test_pipeline_stages() -> None:
    sc = parse("curl x | tee f | sh; ls")
    assert [(c.pipeline, c.stage) for c in sc.commands] == [(0, 0), (0, 1), (0, 2), (1, 0)]


def test_quotes_and_escapes_are_removed() -> None:
    assert words("r''m -rf '/'") == [["rm", "-rf", "/"]]
    assert words('"r"m \\-rf x') == [["rm", "-rf", "x"]]
    assert words("r\\m a\\ b") == [["rm", "a b"]]
    assert words("echo 'a \"b\" c'") == [["echo", 'a "b" c']]


def test_line_continuation() -> None:
    assert words("rm -rf \\\n  ~/x") == [["rm", "-rf", UNKNOWN + "/x"]]  # ~ is an expansion


def test_ansi_c_quoting_is_decoded() -> None:
    assert words("$'\\x72\\x6d' -rf $'\\057'") == [["rm", "-rf", "/"]]


def test_substitutions_are_parts_not_text() -> None:
    sc = parse('echo "$(rm -rf ~)" `ls /` <(curl x)')
    parts = [p for w in sc.commands[0].words for p in w.parts if p.kind in ("sub", "proc")]
    assert [(p.kind, p.text) for p in parts] == [("sub", "rm -rf ~"), ("sub", "ls /"), ("proc", "curl x")]
    assert word_strings(sc.commands[0])[1] == UNKNOWN


def test_nested_substitution_with_quotes_and_parens() -> None:
    sc = parse('x "$(echo ")" $(date))" y')
    assert len(sc.commands) == 1
    assert [p.text for w in sc.commands[0].words for p in w.parts if p.kind == "sub"] == ['echo ")" $(date)']


def test_heredoc_body_attached_and_not_parsed_as_commands() -> None:
    sc = parse("cat > f.md <<'EOF'\nrm -rf /\nEOF\nls")
    assert words("cat > f.md <<'EOF'\nrm -rf /\nEOF\nls") == [["cat"], ["ls"]]
    r = [r for r in sc.commands[0].redirs if r.op == "<<"][0]
    assert r.heredoc == "rm -rf /" and r.heredoc_quoted
    tabbed = parse("psql <<-SQL\n\tDROP TABLE x;\n\tSQL\necho done")
    assert [r.heredoc for r in tabbed.commands[0].redirs] == ["DROP TABLE x;"]
    assert word_strings(tabbed.commands[1]) == ["echo", "done"]


def test_redirections_and_fds() -> None:
    sc = parse("ls 2>/dev/null >out.txt 2>&1 >> log &>all")
    ops = [(r.fd, r.op, r.target.raw if r.target else None) for r in sc.commands[0].redirs]
    assert ops == [("2", ">", "/dev/null"), ("", ">", "out.txt"), ("2", ">&", "1"), ("", ">>", "log"), ("", "&>", "all")]


def test_assignments_and_reserved_words() -> None:
    sc = parse("X=1 Y=$HOME cmd a; if true; then rm x; fi; for f in a b; do echo $f; done")
    assert [n for n, _w in sc.commands[0].assigns] == ["X", "Y"]
    assert words("if true; then rm x; fi") == [["true"], ["rm", "x"]]
    assert ["for", "f", "in", "a", "b"] in words("for f in a b; do echo $f; done")


def test_function_definitions_and_groups() -> None:
    sc = parse(":(){ :|:& };:")
    assert sc.commands[0].funcdef == ":"
    body = [c for c in sc.commands if c.depth > 0]
    assert len(body) == 2 and body[-1].background


def test_comments_are_ignored_but_hash_in_words_is_kept() -> None:
    assert words("ls # rm -rf /\necho a#b") == [["ls"], ["echo", "a#b"]]


def test_unterminated_input_never_raises() -> None:
    for text in ["echo 'abc", 'echo "abc', "echo $(ls", "echo `ls", "cat <<EOF\nx", "${", "$'\\x", "(((", "}}}"]:
        parse(text)


def test_plus_equals_with_no_name_is_a_command_word() -> None:
    # bash runs `+=1` as a command (no variable name before `+=`); the lexer used to raise IndexError on it
    assert words("+=1 -rf /tmp/x; A+=b c") == [["+=1", "-rf", "/tmp/x"], ["c"]]


def test_a_nameless_assignment_does_not_hide_what_follows() -> None:
    # the IndexError turned the whole call into "analyzer failed: ask", so `+=x;` in front downgraded a deny
    from sophia.guardian.analyze import analyze_tool

    env = {"HOME": "/home/dev", "CLAUDE_PROJECT_DIR": "/home/dev/projects/app"}
    assert analyze_tool("Bash", {"command": "+=x; rm -rf ~"}, "/home/dev/projects/app", env).level == "deny"
