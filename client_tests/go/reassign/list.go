package main

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listAll sends ListPartitionReassignments with null topics (every reassignment).
func listAll(ctx context.Context, cl *kgo.Client) (kadm.ListPartitionReassignmentsResponses, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.Topics = nil
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := make(kadm.ListPartitionReassignmentsResponses)
	for _, t := range resp.Topics {
		ps := make(map[int32]kadm.ListPartitionReassignmentsResponse)
		out[t.Topic] = ps
		for _, p := range t.Partitions {
			ps[p.Partition] = kadm.ListPartitionReassignmentsResponse{
				Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas,
			}
		}
	}
	return out, nil
}
