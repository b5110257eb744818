"""The group coordinator: one namespace of groups of every type, committed offsets."""
