"""The learning loop: what every session teaches, digested without the user typing a command.

``learners``: the lessons that cost no tokens (error -> fix procedures, the project playbook,
recurring failures as knowledge gaps), read from the session's own commands.
"""
