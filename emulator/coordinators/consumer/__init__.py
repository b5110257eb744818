"""KIP-848 consumer groups: ConsumerGroupHeartbeat, assignors, migration."""
