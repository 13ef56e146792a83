"""A small pure-Python package the runtime tests patch: no torch, the same shapes."""
