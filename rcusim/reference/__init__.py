"""SimPy reference model of rcusim's mechanisms."""
