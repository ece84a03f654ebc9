"""The guardian: a PreToolUse safety check that stops real damage, not harmless commands.

Tier 1 is ``hooks/guardian_tier1.sh``: a bash prefilter (builtins only) that allows ordinary calls
at once, and hands calls with risky tokens to this package's analyzer, run as
``python3 -I -S lib/sophia/guardian/run.py`` (standard library only). The analyzer understands
shell (:mod:`.shell`, :mod:`.wrappers`, :mod:`.fields`) and the commands hidden behind others
(:mod:`.hidden`, :mod:`.awk`, :mod:`.git_runs`), judges targets against the project, HOME and temp dirs
(:mod:`.targets`) and applies one rule module per family (:mod:`.rules_fs`, :mod:`.rules_sys`,
:mod:`.rules_vcs_db` with :mod:`.git_opts`, :mod:`.rules_exec` with :mod:`.reverse_shell`, :mod:`.sql`
and :mod:`.code`). :mod:`.hook` applies the
user's settings (:mod:`.config`: mode enforce|warn|off, allow/deny regexes), logs every deny/ask with
secrets redacted (:mod:`.log`) and answers Claude Code with ``hookSpecificOutput.permissionDecision``.

Designed failure mode: calls the prefilter passes never reach Python, so an analyzer failure cannot
affect them. A call the prefilter flags but the analyzer cannot judge (python3 missing, analyzer
crash or time-out, malformed input, garbage output) gets ``ask``: the user decides. Never a silent
allow, never exit 1 (which Claude Code would treat as "proceed"), never a traceback.

Tier 2 stays deferred (seed 7.5). Tier 3 is the ``s3-guardian`` subagent, whose AuditResult
``s3 guardian apply`` validates and logs (:mod:`.audit`).
"""
