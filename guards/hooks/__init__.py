"""Layer 1, hooks: the only guard code on user threads (collective wrappers, the DDP comm hook,
the optimizer-step hook, hand-made replicas). All of it fails open. Imports only ``record``."""
