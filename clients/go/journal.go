package kafkaemulator

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// ---- fault rules -----------------------------------------------------------------------

// FaultRule is a rule in force (inject_error, drop_response or observe): what it matches,
// how often it matched and fired, how many failures it has left. An exhausted rule stays
// listed, inactive, until removed.
type FaultRule struct {
	ID              string  `json:"id"`
	Op              string  `json:"op"`
	API             *string `json:"api_name"`
	Error           *string `json:"error_name"`
	Group           *string `json:"group"`
	TransactionalID *string `json:"transactional_id"`
	Topic           *string `json:"topic"`
	Partition       *int    `json:"partition"`
	ClientID        *string `json:"client_id"`
	Broker          *int    `json:"broker"`
	Match           *string `json:"match"`
	After           int     `json:"after"`
	Count           *int    `json:"count"`
	Remaining       *int    `json:"remaining"`
	Matched         int64   `json:"matched"`
	Hits            int64   `json:"hits"`
	Active          bool    `json:"active"`
}

// Rules returns every fault rule, active or exhausted.
func (c *Container) Rules(ctx context.Context) ([]FaultRule, error) {
	var out struct {
		Rules []FaultRule `json:"rules"`
	}
	err := c.Control(ctx, "GET", "/rules", nil, &out)
	return out.Rules, err
}

// Rule returns one rule by id.
func (c *Container) Rule(ctx context.Context, id string) (*FaultRule, error) {
	var r FaultRule
	if err := c.Control(ctx, "GET", "/rules/"+url.PathEscape(id), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RemoveRule removes a rule.
func (c *Container) RemoveRule(ctx context.Context, id string) error {
	return c.Control(ctx, "DELETE", "/rules/"+url.PathEscape(id), nil, nil)
}

// WaitForRule waits until a rule has fired (observe: matched) hits times and returns it; an
// error naming the rule's count when it has not within timeout.
func (c *Container) WaitForRule(ctx context.Context, id string, hits int, timeout time.Duration) (*FaultRule, error) {
	var out struct {
		Reached bool      `json:"reached"`
		Rule    FaultRule `json:"rule"`
	}
	err := c.Control(ctx, "POST", "/rules/"+url.PathEscape(id)+"/wait",
		map[string]any{"hits": hits, "timeout_ms": timeout.Milliseconds()}, &out)
	if err != nil {
		return nil, err
	}
	if !out.Reached {
		return &out.Rule, fmt.Errorf("kafkaemulator: rule %s fired %d of %d times within %s",
			id, out.Rule.Hits, hits, timeout)
	}
	return &out.Rule, nil
}

// ---- groups ----------------------------------------------------------------------------

// Member is one member of a group.
type Member struct {
	MemberID        string  `json:"member_id"`
	ClientID        string  `json:"client_id"`
	GroupInstanceID *string `json:"group_instance_id"`
}

// GroupView is a group as its coordinator holds it.
type GroupView struct {
	Group       string   `json:"group"`
	Type        string   `json:"type"`
	State       string   `json:"state"`
	Generation  int      `json:"generation"`
	Coordinator int      `json:"coordinator"`
	Members     []Member `json:"members"`
}

// Group returns a group (a *ControlError 404 when unknown).
func (c *Container) Group(ctx context.Context, group string) (*GroupView, error) {
	var g GroupView
	if err := c.Control(ctx, "GET", "/groups/"+url.PathEscape(group), nil, &g); err != nil {
		return nil, err
	}
	return &g, nil
}

// WaitForGroup waits until a group is in state ("Stable") with members members (0: any).
func (c *Container) WaitForGroup(ctx context.Context, group, state string, members int, timeout time.Duration) (*GroupView, error) {
	body := map[string]any{"state": state, "timeout_ms": timeout.Milliseconds()}
	if members > 0 {
		body["members"] = members
	}
	var out struct {
		Reached bool       `json:"reached"`
		Group   *GroupView `json:"group"`
	}
	if err := c.Control(ctx, "POST", "/groups/"+url.PathEscape(group)+"/wait", body, &out); err != nil {
		return nil, err
	}
	if !out.Reached {
		return out.Group, fmt.Errorf("kafkaemulator: group %s not %s (members %d) within %s: %+v",
			group, state, members, timeout, out.Group)
	}
	return out.Group, nil
}

// ---- the request journal ---------------------------------------------------------------

// TopicPartition is a partition a request named.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}

// JournalEntry is one request the cluster received: broker, client, API and version, what it
// named, the error names of its answer (empty: success), the rule that answered it.
type JournalEntry struct {
	Seq              int64            `json:"seq"`
	TimeMs           int64            `json:"time_ms"`
	Broker           int              `json:"broker"`
	ClientID         string           `json:"client_id"`
	API              string           `json:"api"`
	APIKey           int              `json:"api_key"`
	Version          int              `json:"version"`
	CorrelationID    int32            `json:"correlation_id"`
	Topics           []string         `json:"topics"`
	Partitions       []TopicPartition `json:"partitions"`
	Groups           []string         `json:"groups"`
	TransactionalIDs []string         `json:"transactional_ids"`
	Errors           []string         `json:"errors"`
	Injected         *string          `json:"injected"` // the rule that answered it, if one did
	HeldMs           int64            `json:"held_ms"`
	Outcome          string           `json:"outcome"`
}

// Succeeded reports an answer without error codes.
func (e JournalEntry) Succeeded() bool { return len(e.Errors) == 0 && e.Outcome == "answered" }

// Journal is an answer of the journal: its state and the entries a query selected.
type Journal struct {
	Enabled  bool           `json:"enabled"`
	Capacity int            `json:"capacity"`
	Size     int            `json:"size"`
	Dropped  int64          `json:"dropped"`
	NextSeq  int64          `json:"next_seq"`
	Entries  []JournalEntry `json:"entries"`
}

// JournalQuery selects journal entries; empty fields select everything. Error "NONE" selects
// the requests answered without error; Since a previous answer's NextSeq polls.
type JournalQuery struct {
	API             string
	Broker          int // 0: any
	ClientID        string
	Group           string
	TransactionalID string
	Topic           string
	Error           string
	Match           string
	Since           int64
	Limit           int
}

func (q JournalQuery) encode() string {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("api", q.API)
	set("client_id", q.ClientID)
	set("group", q.Group)
	set("transactional_id", q.TransactionalID)
	set("topic", q.Topic)
	set("error", q.Error)
	set("match", q.Match)
	if q.Broker != 0 {
		v.Set("broker", strconv.Itoa(q.Broker))
	}
	if q.Since != 0 {
		v.Set("since", strconv.FormatInt(q.Since, 10))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// EnableJournal starts recording every request, keeping the last capacity entries (0: the
// emulator's default); on a running journal it resizes.
func (c *Container) EnableJournal(ctx context.Context, capacity int) (*Journal, error) {
	body := map[string]any{}
	if capacity > 0 {
		body["capacity"] = capacity
	}
	var j Journal
	err := c.Control(ctx, "POST", "/journal", body, &j)
	return &j, err
}

// ClearJournal forgets the entries recorded so far; recording goes on.
func (c *Container) ClearJournal(ctx context.Context) error {
	return c.Control(ctx, "POST", "/journal", map[string]any{"clear": true}, nil)
}

// DisableJournal stops recording and drops the entries.
func (c *Container) DisableJournal(ctx context.Context) error {
	return c.Control(ctx, "DELETE", "/journal", nil, nil)
}

// Journal returns the entries the query selects, oldest first.
func (c *Container) Journal(ctx context.Context, q JournalQuery) (*Journal, error) {
	var j Journal
	if err := c.Control(ctx, "GET", "/journal"+q.encode(), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// ---- barriers --------------------------------------------------------------------------

// Barrier holds the requests it matches until released: a test forces an interleaving
// (Barrier{API: "JoinGroup", ClientID: "consumer-b"}: B's join waits until A committed).
type Barrier struct {
	ID              string `json:"id,omitempty"`
	Match           string `json:"match,omitempty"`
	API             string `json:"api,omitempty"`
	Group           string `json:"group,omitempty"`
	TransactionalID string `json:"transactional_id,omitempty"`
	Topic           string `json:"topic,omitempty"`
	ClientID        string `json:"client_id,omitempty"`
	Broker          int    `json:"broker,omitempty"`
	Count           int    `json:"count,omitempty"` // hold only the first Count (0: all)
}

// BarrierView is a barrier in force: how many requests it holds now, caught and released.
type BarrierView struct {
	ID       string `json:"id"`
	Held     int    `json:"held"`
	Caught   int64  `json:"caught"`
	Released int64  `json:"released"`
	Active   bool   `json:"active"`
}

// AddBarrier starts holding the requests b matches.
func (c *Container) AddBarrier(ctx context.Context, b Barrier) (*BarrierView, error) {
	var v BarrierView
	err := c.Control(ctx, "POST", "/barriers", b, &v)
	return &v, err
}

// Barriers returns every barrier.
func (c *Container) Barriers(ctx context.Context) ([]BarrierView, error) {
	var out struct {
		Barriers []BarrierView `json:"barriers"`
	}
	err := c.Control(ctx, "GET", "/barriers", nil, &out)
	return out.Barriers, err
}

// GetBarrier returns one barrier by id.
func (c *Container) GetBarrier(ctx context.Context, id string) (*BarrierView, error) {
	var v BarrierView
	if err := c.Control(ctx, "GET", "/barriers/"+url.PathEscape(id), nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// WaitForBarrier waits until a barrier holds held requests.
func (c *Container) WaitForBarrier(ctx context.Context, id string, held int, timeout time.Duration) (*BarrierView, error) {
	var out struct {
		Reached bool        `json:"reached"`
		Barrier BarrierView `json:"barrier"`
	}
	err := c.Control(ctx, "POST", "/barriers/"+url.PathEscape(id)+"/wait",
		map[string]any{"held": held, "timeout_ms": timeout.Milliseconds()}, &out)
	if err != nil {
		return nil, err
	}
	if !out.Reached {
		return &out.Barrier, fmt.Errorf("kafkaemulator: barrier %s holds %d of %d requests after %s",
			id, out.Barrier.Held, held, timeout)
	}
	return &out.Barrier, nil
}

// ReleaseBarrier lets the oldest count held requests go (0: all); it keeps holding new ones.
func (c *Container) ReleaseBarrier(ctx context.Context, id string, count int) (*BarrierView, error) {
	body := map[string]any{}
	if count > 0 {
		body["count"] = count
	}
	var v BarrierView
	err := c.Control(ctx, "POST", "/barriers/"+url.PathEscape(id)+"/release", body, &v)
	return &v, err
}

// RemoveBarrier releases everything held and removes the barrier.
func (c *Container) RemoveBarrier(ctx context.Context, id string) error {
	return c.Control(ctx, "DELETE", "/barriers/"+url.PathEscape(id), nil, nil)
}
