"""The learning loop: what every session teaches, digested without the user typing a command.

``condense`` (stdlib): the digest's redacted, budgeted input built from a transcript.
``learners`` (stdlib): the lessons that cost no tokens (error -> fix procedures, the project
playbook, recurring failures as knowledge gaps), read from the session's own commands.
``queue`` (stdlib only: hooks import it to enqueue) holds one job per file under
``digests/{pending,running,done,parked}/``; ``worker`` (a singleton) drains it through
``headless`` Claude Code runs and ``s3 apply``; ``ledger`` records each run's tokens and cost
and answers whether today's caps allow one more.
"""
