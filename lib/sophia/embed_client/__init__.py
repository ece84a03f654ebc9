"""How everything but the service reaches the embedding service. Standard library only, safe on hook paths.

``client`` talks line-delimited JSON over a Unix socket (``protocol.sock_path``, in a short per-user
runtime folder) to ``python -m sophia.embed.service``; ``settings`` reads the embedding keys of
config.json. It sits below ``sophia.index`` (which asks it for semantic hits and nudges the service after
every write); the service itself (``sophia.embed``) sits above the index, whose items it embeds.
"""
