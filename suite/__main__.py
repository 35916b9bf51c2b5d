import sys

from suite.cli import main
from suite.run.launch import script_argv

sys.argv[1:] = script_argv(sys.argv[1:])  # torchrun's "--" (suite/run/launch.py), where it is passed on
raise SystemExit(main())
