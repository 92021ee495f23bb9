"""Layer 0, record: what one rank did, as fixed-width integers every rank computes alike
(collective fingerprints, ledger ring buffers, tensor hashes, call sites). Imports no other
layer of the guard."""
