"""python -m emulator: same as the kafka-emulator command."""

import sys

from emulator.cli import main

sys.exit(main())
