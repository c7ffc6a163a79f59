"""Notifications: which runs entering a state that needs a human are told, and how (docs:
operator-guide.md's "Notifications")."""
