"""``python -m rcusim``: see rcusim.cli."""

from rcusim.cli import main

raise SystemExit(main())
