"""Command-line tools, each a ``kafka-emulator`` subcommand (see ``emulator.cli``)."""
