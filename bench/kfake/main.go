// kfake-server starts franz-go's kfake (an in-process fake Kafka cluster) as its own
// process, so bench/start.py can time it from process start to the first acknowledged
// produce, as it does the emulator and Kafka. It prints one line once every broker
// listens and runs until SIGINT or SIGTERM.
//
//	kfake-server -brokers 3 -port 9092
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	brokers := flag.Int("brokers", 3, "number of brokers")
	port := flag.Int("port", 0, "base port: broker i listens on port+i-1 (0: free ports)")
	partitions := flag.Int("partitions", 1, "partitions of an auto-created topic (Kafka's num.partitions)")
	flag.Parse()

	// Auto-created topics as Kafka's default auto.create.topics.enable=true: the
	// benchmark's first produce goes to a topic nobody created.
	opts := []kfake.Opt{
		kfake.NumBrokers(*brokers),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(*partitions),
	}
	if *port != 0 {
		ports := make([]int, *brokers)
		for i := range ports {
			ports[i] = *port + i
		}
		opts = append(opts, kfake.Ports(ports...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake-server:", err)
		os.Exit(1)
	}
	fmt.Println("kfake ready: bootstrap servers " + strings.Join(c.ListenAddrs(), ","))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	c.Close()
}
