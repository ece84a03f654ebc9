"""The destructive-subcommand tables (packs.py, rules_remote.PACKS, rules_sys.DISKS): how a rule matches,
and that every program of a table is judged and reaches the analyzer."""

from __future__ import annotations

import pytest

from sophia.guardian import dispatch, packs, rules_remote, rules_sys
from sophia.guardian.analyze import analyze_tool
from sophia.guardian.packs import Pack, rule

from .conftest import PROJECT, payload, run_hook

TOY = Pack([
    rule("s3 rm", "ask", "deletes objects"),
    rule("s3 rm", "deny", "deletes every object", opts="--recursive+--force"),
    rule("** delete|delete-*", "ask", "deletes resources", unless="--keep"),
    rule("apply", "deny", "destroys", opts="-X=DELETE"),
    rule("apps destroy", "ask", "deletes an app"),
    rule("get pv|pvc", "ask", "a kind, also in ns/name and a,b forms"),
    rule("wipe", "ask", "wipes", opts="-r"),
], safe="--dry-run help", takes="--profile", colon=True)


@pytest.mark.parametrize(("args", "want"), [
    ("s3 rm s3://b/k", "ask"),
    ("--profile prod s3 rm s3://b", "ask"),  # an option's value is not a subcommand word
    ("s3 rm s3://b --recursive", "ask"),
    ("s3 rm s3://b --recursive --force", "deny"),  # a+b: both options
    ("s3 ls s3://b/rm", None),
    ("s3 rm s3://b --dry-run", None),  # the pack's safe option
    ("s3 rm help", None),  # a safe word among the positionals
    ("compute instances delete vm1", "ask"),  # "**" skips up to four group words
    ("a b c d e delete vm1", None),  # ... not five
    ("sql delete-db-instance x", "ask"),  # a glob
    ("compute instances delete vm1 --keep", None),  # unless
    ("apply -X DELETE", "deny"), ("apply -XDELETE", "deny"), ("apply --x=1 -X=delete", "deny"), ("apply -X GET", None),
    ("apps:destroy --app x", "ask"),  # colon=True: apps:destroy is two words
    ("get pv/data-0", "ask"), ("get svc,pvc", "ask"), ("get pod/x", None),
    ("wipe -rf x", "ask"), ("wipe --recursive", None),  # a two-letter option inside a cluster
    ("", None),
])
def test_a_call_matches_its_worst_rule(args: str, want: str | None) -> None:
    found = packs.worst(TOY, args.split())
    assert (found[1] if found else None) == want


def test_safe_options_are_only_taken_as_spelled() -> None:
    """``-h`` (help) is not inside ``-auth``: a pack's safe options never match as a cluster."""
    pack = Pack([rule("delete-*", "ask", "deletes")], safe="-h", takes="-auth")
    assert packs.worst(pack, ["-auth", "u:t", "delete-job", "x"]) is not None
    assert packs.worst(pack, ["-h", "delete-job"]) is None


def test_every_table_is_well_formed_and_every_program_is_judged() -> None:
    progs = dispatch.programs()
    for table in (rules_remote.PACKS, rules_sys.DISKS):
        for name, pack in table.items():
            assert name in progs, name  # judged, so a prefilter word (test_prefilter proves it reaches Python)
            assert pack.rules, name
            for words, level, what, opts, unless in pack.rules:
                assert level in ("ask", "deny") and what and not what.endswith("."), (name, words)
                assert all(f == " ".join(f.split()) for f in (words, opts, unless)), (name, words)
    assert "java" in progs and "firebase-tools" in progs  # the Jenkins CLI's launcher, an npm package name


def _sample(name: str, words: str, opts: str) -> str:
    """A command one rule matches: the first spelling of each word and of the first options."""
    parts = [name]
    for w in words.split():
        alt = w.split("|")[0]
        parts += [] if alt == "**" else ["x" if alt == "*" else alt.replace("*", "x")]
    for o in opts.split()[:1]:
        parts += [p.replace("=", " ") for p in o.split("+")]
    return " ".join(parts)


def test_every_rule_of_the_remote_table_reaches_the_analyzer(probe_env: dict[str, str]) -> None:
    """The remote programs' names are no prefilter words: each rule's call must hold a stem or trigger."""
    samples = {_sample(n, w, o) for n, pack in rules_remote.PACKS.items() for w, _l, _what, o, _u in pack.rules}
    assert len(samples) > 150
    missed = sorted(c for c in samples if run_hook(payload(command=c), probe_env).reason != "reached")
    assert missed == []
    for cmd in samples:  # and each sample is one its rule stops
        assert _level(cmd) != "allow", cmd


def _level(cmd: str) -> str:
    return analyze_tool("Bash", {"command": cmd}, PROJECT, {"HOME": "/home/dev"}).level


@pytest.mark.parametrize(("cmd", "want"), [
    ("npx -y vercel@latest remove shop --yes", "ask"),  # npx runs the package's program
    ("bunx supabase db reset --linked", "deny"),
    ("npx -c 'terraform destroy -auto-approve'", "deny"),
    ("npx rimraf ~", "deny"),  # any program a rule judges, not only remote ones
    ("npx prettier --write .", "allow"),
    ("doppler run -- gh repo delete acme/site --yes", "ask"),  # a secrets runner's command is judged
    ("aws-vault exec prod -- aws sqs purge-queue --queue-url q", "deny"),
    ("kubectl exec -it web -- rm -rf /", "deny"),
])
def test_launchers_and_runners_judge_the_program_they_run(cmd: str, want: str) -> None:
    assert _level(cmd) == want


@pytest.mark.parametrize(("cmd", "want"), [
    ("curl -X DELETE localhost:9200/_all", "deny"),
    ("curl -sXDELETE 'http://127.0.0.1:9200/logs-*'", "deny"),
    ("curl -X DELETE localhost:9200/orders", "ask"),  # a search engine's port: an index, even on localhost
    ("curl -X DELETE http://localhost:5000/api/orders/3", "allow"),  # one's own dev server
    ("curl -X DELETE http://localhost:5000/api/collections/3", "ask"),  # a vector store's path
    ("curl -X DELETE https://api.example.com/orders/3", "ask"),  # a remote API
    ("curl -X DELETE \"$API/orders/3\"", "ask"),  # a host only known at run time
    ("curl -H 'X-Method: DELETE' https://api.example.com/orders", "allow"),  # a header is not the method
    ("curl -d 'action=DELETE' https://api.example.com/orders", "allow"),
    ("https DELETE example.com/orders/3", "ask"), ("http GET example.com/delete", "allow"),
    ("wget --method DELETE https://api.example.com/orders/3", "ask"),
])
def test_http_deletes_are_judged_by_where_they_go(cmd: str, want: str) -> None:
    assert _level(cmd) == want
