"""PhoneBuddy Desktop: the Qt window (PySide6) and the `phonebuddy` command line."""
