"""`mmpath-pm`: a path-manager daemon for the real kernel's MPTCP (docs/path-manager.md)."""
