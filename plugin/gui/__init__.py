"""The dock and its dialogs and panels (widgets only)."""
