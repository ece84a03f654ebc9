"""The learning loop: sessions are digested in the background, within the user's caps.

``queue`` (stdlib only: hooks import it to enqueue) holds one job per file under
``digests/{pending,running,done,parked}/``; ``worker`` (a singleton) drains it through
``headless`` Claude Code runs and ``s3 apply``; ``ledger`` records each run's tokens and cost
and answers whether today's caps allow one more.
"""
