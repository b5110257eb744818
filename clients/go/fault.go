package kafkaemulator

import (
	"encoding/json"
	"maps"
	"time"
)

// Fault is one operation of the emulator's fault vocabulary (docs/faults.md), built from a
// constructor and narrowed with its methods, each returning a copy:
//
//	kafkaemulator.InjectError("OffsetCommit", "NOT_COORDINATOR").Group("billing").After(2)
//	kafkaemulator.PauseFollower(3).Topic("orders").Partition(0)
//
// APIs are Kafka's names ("Produce") or keys; errors Kafka's error names or codes.
type Fault struct{ fields map[string]any }

// NewFault is any operation by name, for one without a constructor here.
func NewFault(op string) Fault { return Fault{fields: map[string]any{"op": op}} }

// InjectError answers the next requests of an API with an error (once; see Count).
func InjectError(api, errorName string) Fault {
	return NewFault("inject_error").With("api", api).With("error", errorName)
}

// Observe is a rule that counts the requests it matches and never fails one (narrow it
// with Group, Match...; api "" for any API).
func Observe(api string) Fault {
	f := NewFault("observe")
	if api != "" {
		f = f.With("api", api)
	}
	return f
}

// DropResponse applies the next requests of an API but drops their responses.
func DropResponse(api string) Fault { return NewFault("drop_response").With("api", api) }

// AddLatency delays every request of an API by d (zero removes the delay).
func AddLatency(api string, d time.Duration) Fault {
	return NewFault("add_latency").With("api", api).With("ms", d.Milliseconds())
}

// PauseFollower stops a broker's replica fetchers.
func PauseFollower(broker int) Fault { return NewFault("pause_follower").With("broker", broker) }

// SlowFollower lets a broker's replica fetchers fetch only once per every.
func SlowFollower(broker int, every time.Duration) Fault {
	return NewFault("slow_follower").With("broker", broker).With("delay_ms", every.Milliseconds())
}

// ResumeFollower undoes PauseFollower and SlowFollower.
func ResumeFollower(broker int) Fault { return NewFault("resume_follower").With("broker", broker) }

// CutBrokers cuts the network between two brokers.
func CutBrokers(a, b int) Fault { return NewFault("cut_brokers").With("brokers", []int{a, b}) }

// HealBrokers restores the network between two brokers.
func HealBrokers(a, b int) Fault { return NewFault("heal_brokers").With("brokers", []int{a, b}) }

// CutClients cuts clients off a broker (Host: only those from one address).
func CutClients(broker int) Fault { return NewFault("cut_clients").With("broker", broker) }

// HealClients lets clients reach a broker again.
func HealClients(broker int) Fault { return NewFault("heal_clients").With("broker", broker) }

// MoveLeader moves a partition's leader to another in-sync replica (Broker: which).
func MoveLeader(topic string, partition int) Fault {
	return NewFault("move_leader").With("topic", topic).With("partition", partition)
}

// DiskFull fills a broker's log dir: its next write fails and the dir goes offline.
func DiskFull(broker int) Fault { return NewFault("disk_full").With("broker", broker) }

// FailWrites makes writes to a broker's log dir fail (EIO).
func FailWrites(broker int) Fault { return NewFault("fail_writes").With("broker", broker) }

// FailFsyncs makes fsyncs of a broker's log dir fail (EIO).
func FailFsyncs(broker int) Fault { return NewFault("fail_fsyncs").With("broker", broker) }

// SlowWrites makes each write to a broker's log dir take d (zero removes).
func SlowWrites(broker int, d time.Duration) Fault {
	return NewFault("slow_writes").With("broker", broker).With("delay_ms", d.Milliseconds())
}

// HealStorage ends a broker's storage faults.
func HealStorage(broker int) Fault { return NewFault("heal_storage").With("broker", broker) }

// With sets a field by its wire name.
func (f Fault) With(field string, value any) Fault {
	out := maps.Clone(f.fields)
	if out == nil {
		out = map[string]any{}
	}
	out[field] = value
	return Fault{fields: out}
}

// ID names the rule (default assigned: r1, r2...) for Rule, WaitForRule, RemoveRule.
func (f Fault) ID(id string) Fault { return f.With("id", id) }

// Count is how many requests the rule fails (default 1).
func (f Fault) Count(n int) Fault { return f.With("count", n) }

// After lets n matching requests through first (After(2) fails the third).
func (f Fault) After(n int) Fault { return f.With("after", n) }

// Broker limits the fault to requests to this broker (MoveLeader: the new leader).
func (f Fault) Broker(id int) Fault { return f.With("broker", id) }

// Topic limits the fault to requests naming this topic.
func (f Fault) Topic(topic string) Fault { return f.With("topic", topic) }

// Partition limits the fault to this partition of Topic.
func (f Fault) Partition(p int) Fault { return f.With("partition", p) }

// ClientID limits the fault to clients with this client.id.
func (f Fault) ClientID(id string) Fault { return f.With("client_id", id) }

// Group limits the rule to requests naming this group (on its coordinator unless Broker).
func (f Fault) Group(group string) Fault { return f.With("group", group) }

// TransactionalID limits the rule to requests naming this transactional id.
func (f Fault) TransactionalID(id string) Fault { return f.With("transactional_id", id) }

// Match limits the rule to requests this predicate of the match language holds for:
// `generation_id >= 2 and client_id in ["a", "b"]`.
func (f Fault) Match(expr string) Fault { return f.With("match", expr) }

// Host limits CutClients to the clients connecting from this address.
func (f Fault) Host(addr string) Fault { return f.With("host", addr) }

// MarshalJSON writes the operation as the control plane takes it.
func (f Fault) MarshalJSON() ([]byte, error) { return json.Marshal(f.fields) }
