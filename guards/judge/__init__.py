"""Layer 3, judge: pure functions from every rank's summary to a verdict. Imports only
``protocol``."""
