"""Python behind the lifecycle hooks. Standard library only: hooks run ``python -I -S``.

Each hook script (``hooks/*.sh``) runs one module of this package through ``launch.py``, which
puts ``lib`` on ``sys.path`` (``-I`` ignores PYTHONPATH) and imports the module from its bytecode.
``reflect_runner.py`` is still started as a file (by ``reflection.launch``) and sets its own path.
"""
