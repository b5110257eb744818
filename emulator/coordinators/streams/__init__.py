"""KIP-1071 streams groups: StreamsGroupHeartbeat, topology, task assignment."""
