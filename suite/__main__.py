import sys

from suite.cli import main
from suite.launch import script_argv

sys.argv[1:] = script_argv(sys.argv[1:])  # torchrun's "--" (suite/launch.py), where it is passed on
raise SystemExit(main())
