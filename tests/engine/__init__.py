"""The engine's tests: tests/engine/test_<stem>.py for each cython_core/<stem>.pxi."""
