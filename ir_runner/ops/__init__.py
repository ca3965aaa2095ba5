"""The operations ir-run implements, one module each; ``registry`` loads them on first lookup."""
