"""The learning loop: what turns sessions into lessons (the digest's condensed input, its queue and
worker, the zero-token learners). Standard library only at import: hooks import from here."""
