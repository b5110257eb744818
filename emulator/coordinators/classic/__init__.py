"""Classic groups: JoinGroup, SyncGroup, Heartbeat and LeaveGroup."""
