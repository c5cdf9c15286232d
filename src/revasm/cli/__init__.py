"""The ``revasm`` command line (click): a thin layer over the Python API (``revasm``).

Each ``commands_*`` module holds the subcommands of one job; they parse arguments, call the
library and print.  ``main.main`` is the console entry point.
"""
