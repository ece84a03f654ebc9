"""Team and multi-machine memory: a shared replica in PostgreSQL with pgvector.

Local files stay the source of truth; the team database is a replica that ``s3 team push`` and
``s3 team pull`` keep in step. Standard library only at this level (``config``, ``launch``): the
hooks start a detached sync through :mod:`sophia.team.launch` and never import ``psycopg``; the
modules that talk to the database (``db``, ``schema``, ``sync``, ``recall``) import it lazily.
"""
