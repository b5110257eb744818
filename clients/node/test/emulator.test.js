"use strict";
// KafkaEmulatorContainer against the image (KAFKA_EMULATOR_IMAGE, default kafka-emulator:latest):
// a broker crash in the middle of a stream, an error on one group's commits, and the request
// journal that shows both. Run: node --test
const assert = require("node:assert/strict");
const { after, before, test } = require("node:test");
const { Kafka, logLevel } = require("kafkajs");
const { getContainerRuntimeClient } = require("testcontainers");
const { KafkaEmulatorContainer } = require("..");

let kafka;
let client;

before(async () => {
  const t0 = Date.now();
  kafka = await new KafkaEmulatorContainer(process.env.KAFKA_EMULATOR_IMAGE).withBrokers(3).withSeed(11).start();
  console.log(`started in ${Date.now() - t0} ms`);
  const runtime = await getContainerRuntimeClient();
  const info = await runtime.container.inspect(runtime.container.getById(kafka.getId()));
  console.log(`ready ${Date.now() - Date.parse(info.State.StartedAt)} ms after docker start`);
  await kafka.enableJournal();
  client = new Kafka({ brokers: kafka.getBrokers(), clientId: "node-test", logLevel: logLevel.NOTHING });
});

after(async () => {
  if (kafka) await kafka.stop();
});

async function createTopic(topic, numPartitions) {
  const admin = client.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions, replicationFactor: 3,
                 configEntries: [{ name: "min.insync.replicas", value: "2" }] }],
    });
  } finally {
    await admin.disconnect();
  }
}

test("producing continues through a broker crash, nothing acknowledged is lost", async () => {
  await createTopic("orders", 3);
  const leader = (await kafka.cluster()).topics.orders.partitions[0].leader;
  const producer = client.producer({ idempotent: true });
  await producer.connect();
  const produce = async (from, to) => {
    for (let i = from; i < to; i++) {
      await producer.send({ topic: "orders", acks: -1, messages: [{ key: `k${i}`, value: `v${i}` }] });
    }
  };
  try {
    await produce(0, 100);
    await kafka.stopBroker(leader);
    const down = (await kafka.cluster()).brokers.find((b) => b.id === leader);
    assert.ok(down.crashed || !down.alive, `broker ${leader} still up`);
    await produce(100, 200); // each acknowledged while the leader is down
    await kafka.startBroker(leader);
    await produce(200, 300);
  } finally {
    await producer.disconnect();
  }

  const read = new Set();
  // kafkajs' fetches wait up to 5 s for data, and its disconnect waits for the fetch
  const consumer = client.consumer({ groupId: "node-reader", maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: "orders", fromBeginning: true });
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${read.size} of 300 in 30 s`)), 30_000);
      consumer.run({
        eachMessage: async ({ message }) => {
          read.add(message.value.toString());
          if (read.size === 300) {
            clearTimeout(timer);
            resolve();
          }
        },
      }).catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  for (let i = 0; i < 300; i++) assert.ok(read.has(`v${i}`), `acknowledged record v${i} lost`);

  // The journal saw the stream move: Produce answered by the crashed leader before the
  // crash and by the other brokers while it was down.
  const journal = await kafka.journal({ api: "Produce", topic: "orders", error: "NONE" });
  const brokers = new Set(journal.entries.map((e) => e.broker));
  assert.ok(brokers.has(leader) && brokers.size >= 2, `Produce answered by ${[...brokers]}`);
});

test("an error on one group's commits only", async () => {
  await createTopic("payments", 1);
  const producer = client.producer();
  await producer.connect();
  await producer.send({ topic: "payments", messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })) });
  await producer.disconnect();
  await kafka.injectError("OffsetCommit", "GROUP_AUTHORIZATION_FAILED", { group: "billing", id: "billing-commit" });

  const consume = async (groupId) => {
    const c = new Kafka({ brokers: kafka.getBrokers(), clientId: `${groupId}-1`, logLevel: logLevel.NOTHING })
      .consumer({ groupId, maxWaitTimeInMs: 200 });
    await c.connect();
    await c.subscribe({ topic: "payments", fromBeginning: true });
    let seen = 0;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${groupId} read ${seen} of 10`)), 30_000);
      c.run({
        autoCommit: false,
        eachMessage: async () => {
          if (++seen === 10) {
            clearTimeout(timer);
            resolve();
          }
        },
      }).catch(reject);
    });
    return c;
  };
  const billing = await consume("billing");
  const audit = await consume("audit");
  const group = await kafka.waitForGroup("billing", { state: "Stable", members: 1 });
  assert.equal(group.members[0].clientId, "billing-1");
  const offsets = [{ topic: "payments", partition: 0, offset: "10" }];
  try {
    await audit.commitOffsets(offsets);
    await assert.rejects(billing.commitOffsets(offsets),
      (e) => (e.cause?.type ?? e.type) === "GROUP_AUTHORIZATION_FAILED");
    await billing.commitOffsets(offsets); // the rule failed one commit: the next goes through
  } finally {
    await billing.disconnect();
    await audit.disconnect();
  }

  const rule = await kafka.waitForRule("billing-commit", 1, 10_000);
  assert.equal(rule.hits, 1);
  assert.equal(rule.active, false);
  const commits = (await kafka.journal({ api: "OffsetCommit", group: "billing" })).entries;
  assert.deepEqual(commits.map((e) => e.errors), [["GROUP_AUTHORIZATION_FAILED"], []]);
  assert.equal(commits[0].injected, "billing-commit");
  const audits = (await kafka.journal({ api: "OffsetCommit", group: "audit" })).entries;
  assert.ok(audits.length > 0 && audits.every((e) => e.errors.length === 0), JSON.stringify(audits));
});

test("a barrier holds one client's Produce until released", async () => {
  await createTopic("held", 1);
  await kafka.observe({ api: "Produce", clientId: "held-producer", id: "watch" });
  await kafka.addBarrier({ id: "hold", api: "Produce", clientId: "held-producer" });
  const producer = new Kafka({ brokers: kafka.getBrokers(), clientId: "held-producer", logLevel: logLevel.NOTHING })
    .producer();
  await producer.connect();
  try {
    let answered = false;
    const sent = producer.send({ topic: "held", messages: [{ value: "v" }] }).finally(() => { answered = true; });
    assert.equal((await kafka.waitForBarrier("hold", 1)).held, 1);
    assert.equal(answered, false);
    const released = await kafka.releaseBarrier("hold");
    assert.deepEqual([released.caught, released.released, released.held], [1, 1, 0]);
    const [meta] = await sent;
    assert.equal(meta.baseOffset, "0");
  } finally {
    await producer.disconnect();
    await kafka.removeBarrier("hold");
  }
  assert.equal((await kafka.waitForRule("watch", 1)).matched, 1);
  const { entries } = await kafka.journal({ api: "Produce", clientId: "held-producer" });
  assert.equal(entries.length, 1);
  assert.ok(entries[0].errors.length === 0 && entries[0].outcome === "answered", JSON.stringify(entries));
});

test("the seed, the control plane's document and a fault schedule", async () => {
  assert.deepEqual((await kafka.cluster()).fidelity, { mode: "fast", seed: 11 });
  assert.equal((await kafka.openApi()).openapi, "3.1.0");
  const run = await kafka.runSchedule({ seed: 5, faults: [{ at_ms: 0, op: "add_latency", api: "Metadata", ms: 0 }] });
  assert.equal(run.steps, 1);
  assert.equal((await kafka.scheduleStatus()).seed, 5);
});
