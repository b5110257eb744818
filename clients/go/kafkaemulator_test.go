package kafkaemulator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	kafkaemulator "github.com/kafka-emulator/kafka-emulator/clients/go"
)

// One cluster for the tests of this package (KAFKA_EMULATOR_IMAGE, default kafka-emulator:latest).
var kafka *kafkaemulator.Container

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	image := os.Getenv("KAFKA_EMULATOR_IMAGE")
	if image == "" {
		image = kafkaemulator.DefaultImage
	}
	t0 := time.Now()
	var err error
	kafka, err = kafkaemulator.Run(ctx, image, kafkaemulator.WithBrokers(3), kafkaemulator.WithSeed(11))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the emulator:", err)
		return 1
	}
	defer func() { _ = kafka.Terminate(context.Background()) }()
	fmt.Printf("started in %d ms\n", time.Since(t0).Milliseconds())
	if info, err := kafka.Inspect(ctx); err == nil {
		if started, err := time.Parse(time.RFC3339Nano, info.State.StartedAt); err == nil {
			fmt.Printf("ready %d ms after docker start\n", time.Since(started).Milliseconds())
		}
	}
	if _, err := kafka.EnableJournal(ctx, 0); err != nil {
		fmt.Fprintln(os.Stderr, "enabling the journal:", err)
		return 1
	}
	return m.Run()
}

func client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	brokers, err := kafka.Brokers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t *testing.T, name string, partitions int32) {
	t.Helper()
	minISR := "2"
	resp, err := kadm.NewClient(client(t)).CreateTopic(context.Background(), partitions, 3,
		map[string]*string{"min.insync.replicas": &minISR}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

func TestIsThreeBrokers(t *testing.T) {
	brokers, _ := kafka.Brokers(context.Background())
	view, err := kafka.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != 3 || len(view.Brokers) != 3 || view.Fidelity.Seed != 11 {
		t.Fatalf("bootstrap %v, cluster %+v, fidelity %+v", brokers, view.Brokers, view.Fidelity)
	}
	doc, err := kafka.OpenAPI(context.Background())
	if err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi document: %v %v", doc["openapi"], err)
	}
	run, err := kafka.RunSchedule(context.Background(), map[string]any{"seed": 5, "faults": []any{
		map[string]any{"at_ms": 0, "op": "add_latency", "api": "Metadata", "ms": 0}}})
	if err != nil || run["steps"] != float64(1) {
		t.Fatalf("schedule: %v %v", run, err)
	}
	if status, err := kafka.ScheduleStatus(context.Background()); err != nil || status["seed"] != float64(5) {
		t.Fatalf("schedule status: %v %v", status, err)
	}
}

// A second cluster, adversarial under seed 7: the mode and seed reach it, and its
// adversary can be turned off for a test's setup.
func TestAnAdversarialClusterOfOneBroker(t *testing.T) {
	ctx := context.Background()
	image := os.Getenv("KAFKA_EMULATOR_IMAGE")
	if image == "" {
		image = kafkaemulator.DefaultImage
	}
	adv, err := kafkaemulator.Run(ctx, image, kafkaemulator.WithBrokers(1),
		kafkaemulator.WithFidelity("adversarial"), kafkaemulator.WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = adv.Terminate(context.Background()) }()
	view, err := adv.Cluster(ctx)
	if err != nil || view.Fidelity.Mode != "adversarial" || view.Fidelity.Seed != 7 || len(view.Brokers) != 1 {
		t.Fatalf("cluster %+v, %v", view, err)
	}
	if err := adv.SetAdversaryEnabled(ctx, false); err != nil {
		t.Fatal(err)
	}
	record, err := adv.Adversary(ctx)
	if err != nil || record.Seed != 7 || record.Enabled {
		t.Fatalf("adversary %+v, %v", record, err)
	}
}

func TestProducingContinuesThroughABrokerCrash(t *testing.T) {
	ctx := context.Background()
	createTopic(t, "orders", 3)
	view, err := kafka.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p0, _ := view.Partition("orders", 0)
	leader := p0.Leader
	// franz-go refreshes metadata at most every 5 s by default: the crash would cost that
	producer := client(t, kgo.DefaultProduceTopic("orders"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(200*time.Millisecond))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
			if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("record %d not acknowledged: %v", i, err)
			}
		}
	}
	produce(0, 100)
	if err := kafka.StopBroker(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if view, _ = kafka.Cluster(ctx); func() bool { b, _ := view.Broker(leader); return b.Up() }() {
		t.Fatalf("broker %d still up after StopBroker", leader)
	}
	produce(100, 200) // each acknowledged while the leader is down
	if err := kafka.StartBroker(ctx, leader); err != nil {
		t.Fatal(err)
	}
	produce(200, 300)

	consumer := client(t, kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	read := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(read) < 300 && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		consumer.PollFetches(pctx).EachRecord(func(r *kgo.Record) { read[string(r.Value)] = true })
		cancel()
	}
	for i := 0; i < 300; i++ {
		if !read[fmt.Sprintf("v%d", i)] {
			t.Fatalf("acknowledged record v%d lost (read %d)", i, len(read))
		}
	}
	// The journal saw the stream move: Produce answered by the crashed leader before the
	// crash and by the other brokers while it was down.
	j, err := kafka.Journal(ctx, kafkaemulator.JournalQuery{API: "Produce", Topic: "orders", Error: "NONE"})
	if err != nil {
		t.Fatal(err)
	}
	brokers := map[int]bool{}
	for _, e := range j.Entries {
		brokers[e.Broker] = true
	}
	if !brokers[leader] || len(brokers) < 2 {
		t.Fatalf("Produce answered by %v (leader %d)", brokers, leader)
	}
}

func TestAnErrorOnOneGroupsCommitsOnly(t *testing.T) {
	ctx := context.Background()
	createTopic(t, "payments", 1)
	producer := client(t, kgo.DefaultProduceTopic("payments"))
	for i := 0; i < 10; i++ {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	err := kafka.Fault(ctx, kafkaemulator.InjectError("OffsetCommit", "GROUP_AUTHORIZATION_FAILED").
		Group("billing").ID("billing-commit"))
	if err != nil {
		t.Fatal(err)
	}
	consumer := func(group string) *kgo.Client {
		cl := client(t, kgo.ConsumeTopics("payments"), kgo.ConsumerGroup(group),
			kgo.ClientID(group+"-1"), kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		seen := 0
		deadline := time.Now().Add(30 * time.Second)
		for seen < 10 && time.Now().Before(deadline) {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			seen += len(cl.PollFetches(pctx).Records())
			cancel()
		}
		if seen != 10 {
			t.Fatalf("%s read %d of 10 records", group, seen)
		}
		return cl
	}
	billing, audit := consumer("billing"), consumer("audit")
	group, err := kafka.WaitForGroup(ctx, "billing", "Stable", 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if group.Members[0].ClientID != "billing-1" {
		t.Fatalf("billing's members: %+v", group.Members)
	}
	if err := audit.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("audit's commit failed: %v", err)
	}
	if err := billing.CommitUncommittedOffsets(ctx); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("billing's first commit: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	if err := billing.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("billing's second commit (the rule is spent): %v", err)
	}
	rule, err := kafka.WaitForRule(ctx, "billing-commit", 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rule.Hits != 1 || rule.Active {
		t.Fatalf("rule %+v", rule)
	}
	j, err := kafka.Journal(ctx, kafkaemulator.JournalQuery{API: "OffsetCommit", Group: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	var errs [][]string
	for _, e := range j.Entries {
		errs = append(errs, e.Errors)
	}
	if len(j.Entries) != 2 || !slices.Equal(errs[0], []string{"GROUP_AUTHORIZATION_FAILED"}) ||
		len(errs[1]) != 0 || j.Entries[0].Injected == nil || *j.Entries[0].Injected != "billing-commit" {
		t.Fatalf("billing's commits in the journal: %+v", j.Entries)
	}
	j, err = kafka.Journal(ctx, kafkaemulator.JournalQuery{API: "OffsetCommit", Group: "audit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) == 0 {
		t.Fatal("no OffsetCommit of audit in the journal")
	}
	for _, e := range j.Entries {
		if !e.Succeeded() {
			t.Fatalf("audit's commit failed in the journal: %+v", e)
		}
	}
}

func TestABarrierHoldsOneClientsProduceUntilReleased(t *testing.T) {
	ctx := context.Background()
	createTopic(t, "held", 1)
	if err := kafka.Fault(ctx, kafkaemulator.Observe("Produce").ClientID("held-producer").ID("watch")); err != nil {
		t.Fatal(err)
	}
	_, err := kafka.AddBarrier(ctx, kafkaemulator.Barrier{ID: "hold", API: "Produce", ClientID: "held-producer"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kafka.RemoveBarrier(ctx, "hold") }()
	producer := client(t, kgo.ClientID("held-producer"), kgo.DefaultProduceTopic("held"))
	done := make(chan error, 1)
	producer.Produce(ctx, &kgo.Record{Value: []byte("v")}, func(_ *kgo.Record, err error) { done <- err })
	b, err := kafka.WaitForBarrier(ctx, "hold", 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if b.Held != 1 {
		t.Fatalf("barrier %+v", b)
	}
	select {
	case err := <-done:
		t.Fatalf("the held Produce was answered (%v) before its release", err)
	default:
	}
	if b, err = kafka.ReleaseBarrier(ctx, "hold", 0); err != nil || b.Released != 1 || b.Held != 0 || b.Caught != 1 {
		t.Fatalf("release: %+v, %v", b, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the released Produce failed: %v", err)
	}
	rule, err := kafka.WaitForRule(ctx, "watch", 1, 10*time.Second)
	if err != nil || rule.Matched != 1 {
		t.Fatalf("observe rule %+v, %v", rule, err)
	}
	j, err := kafka.Journal(ctx, kafkaemulator.JournalQuery{API: "Produce", ClientID: "held-producer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 1 || !j.Entries[0].Succeeded() {
		t.Fatalf("the held Produce in the journal: %+v", j.Entries)
	}
}
