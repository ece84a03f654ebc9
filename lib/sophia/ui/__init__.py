"""``s3 ui``: a local web viewer of the state home (Starlette, Jinja2, server-drawn SVG; no script).

Not imported by hooks or by other ``s3`` commands. ``app`` builds the pages, ``security`` guards them
(loopback Host, access token, CSRF), ``data`` reads and ``actions`` writes through the library
functions the CLI uses, ``server`` runs uvicorn and keeps the ``--detach`` file.
"""
