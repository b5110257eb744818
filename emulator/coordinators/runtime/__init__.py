"""The coordinators' shared runtime: placement, deadlines, KIP-848 members."""
