"""The guard's agent side: where the main thread is, how a rank ends (signals, its children)."""
