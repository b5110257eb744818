// Command reassign drives partition reassignment and leader election through
// franz-go's kadm, for client_tests/test_reassign_go.py.
//
//	reassign -brokers HOST:PORT,... alter TOPIC:PARTITION=1,2,3 TOPIC:PARTITION=cancel ...
//	reassign -brokers HOST:PORT,... list [TOPIC:PARTITION ...]
//	reassign -brokers HOST:PORT,... elect preferred|unclean TOPIC:PARTITION ...
//
// Each result is printed as one JSON object per line; errors carry Kafka's error
// name and code as kerr reports them, and the broker's message.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

type result struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Error     string  `json:"error"`
	Code      int16   `json:"code"`
	Message   string  `json:"message"`
	Replicas  []int32 `json:"replicas,omitempty"`
	Adding    []int32 `json:"adding,omitempty"`
	Removing  []int32 `json:"removing,omitempty"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "reassign: "+format+"\n", args...)
	os.Exit(2)
}

func parseTP(s string) (string, int32, string) {
	tp, rest, _ := strings.Cut(s, "=")
	i := strings.LastIndex(tp, ":")
	if i < 0 {
		fail("expected TOPIC:PARTITION, got %q", s)
	}
	p, err := strconv.Atoi(tp[i+1:])
	if err != nil {
		fail("bad partition in %q", s)
	}
	return tp[:i], int32(p), rest
}

func errFields(err error, r *result) {
	if err == nil {
		return
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		r.Error, r.Code = ke.Message, ke.Code
	} else {
		r.Error, r.Code = err.Error(), -1
	}
}

func emit(rs []result) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Topic != rs[j].Topic {
			return rs[i].Topic < rs[j].Topic
		}
		return rs[i].Partition < rs[j].Partition
	})
	enc := json.NewEncoder(os.Stdout)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			fail("%v", err)
		}
	}
}

func main() {
	brokers := flag.String("brokers", "", "bootstrap servers")
	flag.Parse()
	args := flag.Args()
	if *brokers == "" || len(args) == 0 {
		fail("usage: reassign -brokers HOSTS alter|list|elect ...")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*brokers, ",")...))
	if err != nil {
		fail("%v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var out []result
	switch args[0] {
	case "alter":
		var req kadm.AlterPartitionAssignmentsReq
		for _, a := range args[1:] {
			t, p, rest := parseTP(a)
			if rest == "cancel" {
				req.CancelAssign(t, p)
				continue
			}
			var replicas []int32
			for _, b := range strings.Split(rest, ",") {
				n, err := strconv.Atoi(b)
				if err != nil {
					fail("bad replica list in %q", a)
				}
				replicas = append(replicas, int32(n))
			}
			req.Assign(t, p, replicas)
		}
		resps, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			fail("alter: %v", err)
		}
		for _, ps := range resps {
			for _, r := range ps {
				res := result{Topic: r.Topic, Partition: r.Partition, Message: r.ErrMessage}
				errFields(r.Err, &res)
				out = append(out, res)
			}
		}
	case "list":
		set := make(kadm.TopicsSet)
		for _, a := range args[1:] {
			t, p, _ := parseTP(a)
			set.Add(t, p)
		}
		var resps kadm.ListPartitionReassignmentsResponses
		if len(set) == 0 {
			// kadm lists the named partitions; list everything through a raw request
			resps, err = listAll(ctx, cl)
		} else {
			resps, err = adm.ListPartitionReassignments(ctx, set)
		}
		if err != nil {
			fail("list: %v", err)
		}
		for _, ps := range resps {
			for _, r := range ps {
				out = append(out, result{Topic: r.Topic, Partition: r.Partition,
					Replicas: r.Replicas, Adding: r.AddingReplicas, Removing: r.RemovingReplicas})
			}
		}
	case "elect":
		if len(args) < 2 {
			fail("elect preferred|unclean TOPIC:PARTITION ...")
		}
		how := kadm.ElectPreferredReplica
		if args[1] == "unclean" {
			how = kadm.ElectLiveReplica
		}
		set := make(kadm.TopicsSet)
		for _, a := range args[2:] {
			t, p, _ := parseTP(a)
			set.Add(t, p)
		}
		resps, err := adm.ElectLeaders(ctx, how, set)
		if err != nil {
			fail("elect: %v", err)
		}
		for _, ps := range resps {
			for _, r := range ps {
				res := result{Topic: r.Topic, Partition: r.Partition, Message: r.ErrMessage}
				errFields(r.Err, &res)
				out = append(out, res)
			}
		}
	default:
		fail("unknown command %q", args[0])
	}
	emit(out)
}
