"""`python -m ts_lint`: the same as the `ts-lint` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
