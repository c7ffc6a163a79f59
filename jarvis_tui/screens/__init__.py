"""The console's screens, one per module."""
