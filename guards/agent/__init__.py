"""Layer 4, agent: the process's guard (install, finish, failure paths), the monitor thread, its
reports, and how a rank ends (signals, its children, torchrun's root cause). Imports any layer
below; nothing below imports it."""
