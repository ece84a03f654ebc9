"""The ``s3`` command line (typer). Command modules are named ``cmd_<topic>.py``."""
