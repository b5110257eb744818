// Command tckafka starts testcontainers-go's own Kafka module (modules/kafka) on another
// image, as its users switch images, and moves records through it with franz-go.
//
//	tckafka IMAGE RECORDS
//
// prints "started in N ms" and "ok: produced N consumed N" (client_tests/
// test_official_image.py reads them). Run with TESTCONTAINERS_RYUK_DISABLED=true where no
// registry can be reached (Ryuk is an image pulled from Docker Hub).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/testcontainers/testcontainers-go/modules/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "tckafka:", err)
		os.Exit(1)
	}
}

func run(image, recordsArg string) error {
	records, err := strconv.Atoi(recordsArg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	ctr, err := kafka.Run(ctx, image, kafka.WithClusterID("tckafka-cluster"))
	if ctr != nil {
		defer func() { _ = ctr.Terminate(context.Background()) }()
	}
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	fmt.Printf("started in %d ms\n", time.Since(t0).Milliseconds())
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		return err
	}
	fmt.Println("bootstrap", brokers)
	topic := "tc-go"
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup("tc-go-group"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for i := 0; i < records; i++ {
		r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
	}
	seen := 0
	for seen < records {
		fetches := cl.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetch: %v", errs)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != fmt.Sprint("v", seen) {
				err = fmt.Errorf("record %d is %s", seen, r.Value)
			}
			seen++
		})
		if err != nil {
			return err
		}
	}
	fmt.Printf("ok: produced %d consumed %d\n", records, seen)
	return nil
}
