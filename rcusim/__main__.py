"""``python -m rcusim``: see rcusim.commands.cli."""

from rcusim.commands.cli import main

raise SystemExit(main())
