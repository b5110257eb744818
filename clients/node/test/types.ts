// Compiled, never run (tsc --noEmit, `npm run typecheck`): index.d.ts holds up against
// what a TypeScript test writes, and a wrong use fails to compile.
import { KafkaEmulatorContainer, type JournalEntry, type StartedKafkaEmulatorContainer } from "..";

export async function typical(): Promise<number> {
  const kafka: StartedKafkaEmulatorContainer = await new KafkaEmulatorContainer("kafka-emulator:latest")
    .withBrokers(3)
    .withFidelity("adversarial", 7)
    .withBrokerConfig("num.partitions", 3)
    .start();
  const brokers: string[] = kafka.getBrokers();
  await kafka.enableJournal({ capacity: 1000 });
  const view = await kafka.cluster();
  const leader: number = view.topics["orders"].partitions[0].leader;
  await kafka.stopBroker(leader, { fenceAfterMs: 6000 });
  await kafka.startBroker(leader);
  await kafka.injectError("OffsetCommit", "GROUP_AUTHORIZATION_FAILED", { group: "billing", after: 2, id: "r" });
  await kafka.fault({ op: "pause_follower", broker: 2, topic: "orders" });
  const rule = await kafka.waitForRule("r", 1, 5000);
  const group = await kafka.waitForGroup("billing", { state: "Stable", members: 2 });
  const r = await kafka.reassign("orders", 0, [2, 3]);
  const adversary = await kafka.adversary();
  await kafka.addBarrier({ id: "b", api: "JoinGroup", clientId: "consumer-b" });
  await kafka.waitForBarrier("b", 1);
  await kafka.releaseBarrier("b");
  const { entries } = await kafka.journal({ api: "OffsetCommit", group: "billing", error: "NONE" });
  const failed: JournalEntry[] = entries.filter((e) => e.errors.length > 0 && e.injected === "r");
  await kafka.stop();
  return brokers.length + rule.hits + group.members.length + r.replicas.length +
    adversary.injected.length + failed.length;
}
