"""Container entry point: run the action and exit with its code."""

import sys

from memory_action.main import main

if __name__ == "__main__":
    sys.exit(main())
