"""Layer 2, protocol: the typed, versioned summaries and verdicts ranks exchange through the
c10d store, and their encoding there. Imports only ``record``."""
