"""Commands: the command line (run, rcuscale), compare, sweep and bench."""
