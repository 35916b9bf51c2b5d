"""The ``goodbench`` commands, one module each: ``add_parser(commands)`` adds the command and
its arguments to the command line's subparsers, and ``run(args)`` calls into the library and
returns the exit status. Torch-free at import, like the command line: a command imports the
library modules it needs inside ``run``. suite/cli.py assembles them."""
