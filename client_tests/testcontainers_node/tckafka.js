// Testcontainers for Node's own Kafka module (@testcontainers/kafka) started on another
// image, and kafkajs moving records through it:
//
//   node tckafka.js IMAGE RECORDS
//
// prints "started in N ms" and "ok: produced N consumed N" (client_tests/
// test_official_image.py reads them). The module reads the image's tag as a Confluent
// Platform version (8.0.0 or later: KRaft; earlier: ZooKeeper mode), so the image needs
// a tag like 8.0.0. Run with TESTCONTAINERS_RYUK_DISABLED=true where no registry can be
// reached (Ryuk is an image pulled from Docker Hub).
const { KafkaContainer } = require("@testcontainers/kafka");
const { Kafka, logLevel } = require("kafkajs");

async function main(image, records) {
  const t0 = Date.now();
  const container = await new KafkaContainer(image).start();
  try {
    console.log(`started in ${Date.now() - t0} ms`);
    const bootstrap = `${container.getHost()}:${container.getMappedPort(9093)}`;
    console.log(`bootstrap ${bootstrap}`);
    const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const topic = "tc-node";
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < records; i++) {
      await producer.send({ topic, messages: [{ key: `k${i}`, value: `v${i}` }] });
    }
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: "tc-node-group" });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} in 60 s`)), 60000);
      consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value.toString());
          if (seen.length === records) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    seen.forEach((v, i) => {
      if (v !== `v${i}`) throw new Error(`record ${i} is ${v}`);
    });
    console.log(`ok: produced ${records} consumed ${seen.length}`);
  } finally {
    await container.stop();
  }
}

main(process.argv[2], Number(process.argv[3])).catch((e) => {
  console.error("tckafka:", e);
  process.exit(1);
});
