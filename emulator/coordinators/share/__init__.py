"""KIP-932 share groups, share-partitions and the share-group state."""
