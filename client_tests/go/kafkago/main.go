// Command kafkago runs what segmentio/kafka-go v0.4.50's own integration tests
// TestConsumerGroupWithTopic and TestConsumerGroupWithGroupTopicsSingle do, for
// client_tests/test_kafka_go.py, with kafka-go itself:
//
//	kafkago -brokers HOST:PORT,... -mode topic|group-topics [-topic T] [-group G] [-timeout 10s]
//
// A Reader with a GroupID (and Topic, or GroupTopics with one topic) starts before its
// topic exists, watching partition changes every 100 ms; a second later the topic is
// created (CreateTopics, 1 partition, then Fetch until the leader serves it, as
// kafka-go's newLocalClientWithTopic does) and a Writer writes one message, which the
// reader must get within the timeout. The first Metadata of the group's leader
// auto-creates the topic (kafka-go asks with AllowAutoTopicCreation), so what the
// reader gets depends on when the created topic becomes visible to Metadata.
//
// Prints one JSON object: ok, the error if any, the messages read, and the reader's log.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

type logger struct {
	mu    sync.Mutex
	start time.Time
	lines []string
}

func (l *logger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%6.0fms ", float64(time.Since(l.start).Microseconds())/1000)+
		strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (l *logger) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

type result struct {
	OK       bool     `json:"ok"`
	Error    string   `json:"error"`
	Topic    string   `json:"topic"`
	Value    string   `json:"value"`
	Messages int64    `json:"messages"`
	Log      []string `json:"log"`
}

func createTopic(client *kafka.Client, topic string) error {
	resp, err := client.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}},
	})
	if err != nil {
		return err
	}
	_ = resp // TOPIC_ALREADY_EXISTS (the reader auto-created it) is fine, as in kafka-go's test
	// kafka-go's clientCreateTopic: up to 2 s of Fetch until the leader serves it
	for i := 0; i < 20; i++ {
		r, err := client.Fetch(context.Background(), &kafka.FetchRequest{Topic: topic, Partition: 0})
		if err == nil && r.Error == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func main() {
	brokers := flag.String("brokers", "", "bootstrap servers, comma-separated")
	mode := flag.String("mode", "topic", "topic (Reader Topic) or group-topics (GroupTopics, one)")
	timeout := flag.Duration("timeout", 10*time.Second, "how long the reader may take")
	topicFlag := flag.String("topic", "", "the topic (default: a new kafka-go-... name)")
	groupFlag := flag.String("group", "", "the group id (default: a new kafka-go-group-... name)")
	flag.Parse()
	if *brokers == "" || (*mode != "topic" && *mode != "group-topics") {
		fmt.Fprintln(os.Stderr, "usage: kafkago -brokers HOST:PORT,... -mode topic|group-topics")
		os.Exit(2)
	}
	addrs := strings.Split(*brokers, ",")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	topic := fmt.Sprintf("kafka-go-%016x", rng.Int63())
	group := fmt.Sprintf("kafka-go-group-%016x", rng.Int63())
	if *topicFlag != "" {
		topic = *topicFlag
	}
	if *groupFlag != "" {
		group = *groupFlag
	}
	log := &logger{start: time.Now()}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conf := kafka.ReaderConfig{
		Brokers:                addrs,
		GroupID:                group,
		MaxWait:                time.Second,
		PartitionWatchInterval: 100 * time.Millisecond,
		WatchPartitionChanges:  true,
		Logger:                 log,
		ErrorLogger:            log,
	}
	if *mode == "topic" {
		conf.Topic = topic
	} else {
		conf.GroupTopics = []string{topic}
	}
	r := kafka.NewReader(conf)
	type read struct {
		msg kafka.Message
		err error
	}
	got := make(chan read, 1)
	go func() {
		msg, err := r.ReadMessage(ctx)
		got <- read{msg, err}
	}()

	time.Sleep(conf.MaxWait)

	out := result{Topic: topic}
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 10 * time.Second}
	transport := &kafka.Transport{}
	client.Transport = transport
	defer transport.CloseIdleConnections()
	if err := createTopic(client, topic); err != nil {
		out.Error = "create topic: " + err.Error()
	} else {
		w := &kafka.Writer{
			Addr:         kafka.TCP(addrs...),
			Topic:        topic,
			BatchTimeout: 10 * time.Millisecond,
			BatchSize:    1,
			Transport:    transport,
		}
		if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(topic)}); err != nil {
			out.Error = "write: " + err.Error()
		}
		_ = w.Close()
		if out.Error == "" {
			rd := <-got
			if rd.err != nil {
				out.Error = "read: " + rd.err.Error()
			} else {
				out.Value = string(rd.msg.Value)
			}
		}
	}
	out.Messages = r.Stats().Messages
	_ = r.Close()
	out.OK = out.Error == "" && out.Messages == 1 && out.Value == topic
	out.Log = log.Lines()
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
}
