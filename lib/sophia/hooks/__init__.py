"""Python behind the lifecycle hooks. Standard library only: hooks run ``python -I -S``.

Each hook script (``hooks/*.sh``) runs one module of this package as a file; the module
puts ``lib`` on ``sys.path`` itself (``-I`` ignores PYTHONPATH).
"""
