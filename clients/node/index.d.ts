import { AbstractStartedContainer, GenericContainer, StartedTestContainer } from "testcontainers";

export declare const DEFAULT_IMAGE: string;

/** A request the control plane refused: its HTTP status and reason. */
export declare class ControlPlaneError extends Error {
  readonly status: number;
}

export type Fidelity = "fast" | "kafka" | "adversarial";

/** Narrows a fault rule, a barrier or a journal query; every field optional. */
export interface Selector {
  /** Kafka's API name ("OffsetCommit") or key. */
  api?: string | number;
  broker?: number;
  clientId?: string;
  /** Requests naming this group (fires on the group's coordinator unless broker is given). */
  group?: string;
  /** Requests naming this transactional id (on its transaction coordinator). */
  transactionalId?: string;
  topic?: string;
  partition?: number;
  /** A predicate of the match language: `generation_id >= 2 and client_id in ["a", "b"]`. */
  match?: string;
}

export interface RuleOptions extends Selector {
  /** The rule's name (default assigned: r1, r2...). */
  id?: string;
  /** How many requests it fails (default 1). */
  count?: number;
  /** Let this many matching requests through first. */
  after?: number;
}

/** One fault operation of the emulator's vocabulary (docs/faults.md). */
export interface Fault extends RuleOptions {
  op: string;
  error?: string | number;
  [field: string]: unknown;
}

export interface Broker {
  id: number;
  host: string;
  port: number;
  /** False once fenced. */
  alive: boolean;
  /** True while its process is down and the controller has not fenced it yet. */
  crashed: boolean;
  shuttingDown: boolean;
  offlineLogDirs: string[];
}

export interface Partition {
  partition: number;
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  addingReplicas: number[];
  removingReplicas: number[];
  highWatermark: number;
  logEndOffsets: Record<string, number>;
}

export interface ClusterView {
  clusterId: string;
  controller: number;
  controllerEpoch: number;
  fidelity: { mode: Fidelity; seed: number };
  brokers: Broker[];
  topics: Record<string, { partitions: Partition[] }>;
}

export interface Reassignment {
  topic: string;
  partition: number;
  replicas: number[];
  adding: number[];
  removing: number[];
  isr: number[];
  leader: number;
}

export interface ElectionResult {
  topic: string;
  partition: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface AdversaryRecord {
  seed: number;
  enabled: boolean;
  scale: Record<string, number>;
  injected: Array<{
    seq: number; seed: number; broker: number; clientId: string; api: string; n: number;
    kind: string; detail: string;
  }>;
  violations: unknown[];
}

export interface FaultRule {
  id: string;
  op: "inject_error" | "drop_response" | "observe";
  api: number | null;
  apiName: string | null;
  error?: number;
  errorName?: string;
  group: string | null;
  transactionalId: string | null;
  topic: string | null;
  partition: number | null;
  clientId: string | null;
  broker: number | null;
  match: string | null;
  after: number;
  count: number | null;
  remaining: number | null;
  /** Matching requests seen, skipped ones included. */
  matched: number;
  /** Times it fired (observe: matched). */
  hits: number;
  active: boolean;
}

export interface GroupView {
  group: string;
  type: string;
  state: string;
  generation: number;
  coordinator: number;
  members: Array<{ memberId: string; clientId: string; groupInstanceId: string | null }>;
}

export interface JournalEntry {
  seq: number;
  timeMs: number;
  broker: number;
  clientId: string | null;
  api: string;
  apiKey: number;
  version: number;
  correlationId: number;
  topics: string[];
  partitions: Array<{ topic: string; partition: number }>;
  groups: string[];
  transactionalIds: string[];
  /** The answer's error codes by name; empty: success. */
  errors: string[];
  /** The fault rule that answered it, if one did. */
  injected: string | null;
  heldMs: number;
  outcome: "answered" | "dropped" | "closed" | "no_response";
}

export interface Journal {
  enabled: boolean;
  capacity: number;
  size: number;
  dropped: number;
  nextSeq: number;
  entries?: JournalEntry[];
}

export interface JournalQuery {
  api?: string;
  broker?: number;
  clientId?: string;
  group?: string;
  transactionalId?: string;
  topic?: string;
  /** An error name; "NONE": answered without error. */
  error?: string;
  match?: string;
  /** Only entries from this sequence number on (a previous answer's nextSeq). */
  since?: number;
  limit?: number;
}

export interface BarrierOptions extends Selector {
  id?: string;
  /** Hold only the first count matching requests (default: all until removed). */
  count?: number;
}

export interface BarrierView {
  id: string;
  held: number;
  holding: Array<{ api: string; clientId: string | null; broker: number; heldMs: number }>;
  caught: number;
  released: number;
  active: boolean;
  [field: string]: unknown;
}

export declare class KafkaEmulatorContainer extends GenericContainer {
  constructor(image?: string);
  /** How many brokers (default 3), ids 1..n. */
  withBrokers(count: number): this;
  /** The first broker's host port (the others follow) instead of a free block. */
  withBasePort(port: number): this;
  withFidelity(mode: Fidelity, seed?: number): this;
  withSeed(seed: number): this;
  /** A broker config by Kafka's name ("num.partitions"). */
  withBrokerConfig(key: string, value: string | number): this;
  start(): Promise<StartedKafkaEmulatorContainer>;
}

export declare class StartedKafkaEmulatorContainer extends AbstractStartedContainer {
  constructor(started: StartedTestContainer, host: string, basePort: number, brokerCount: number,
              token: string);
  /** Every broker's host:port (kafkajs' `brokers`). */
  getBrokers(): string[];
  getBootstrapServers(): string;
  getBrokerIds(): number[];
  getControlUrl(): string;
  getControlToken(): string;
  /** One JSON call to the control plane; the answer's keys camelCased unless raw. */
  control(method: string, path: string, body?: unknown, options?: { raw?: boolean }): Promise<any>;

  cluster(): Promise<ClusterView>;
  partitions(topic: string): Promise<Partition[]>;
  metrics(): Promise<string>;

  /** Crash a broker (fenced at once, or after fenceAfterMs; controlled: shut down cleanly). */
  stopBroker(id: number, options?: { controlled?: boolean; fenceAfterMs?: number }): Promise<unknown>;
  startBroker(id: number): Promise<unknown>;
  controlledShutdown(id: number): Promise<unknown>;

  fault(...faults: Fault[]): Promise<unknown>;
  injectError(api: string | number, error: string | number, options?: RuleOptions): Promise<unknown>;
  /** A rule that counts what it matches and fails nothing. */
  observe(options?: RuleOptions): Promise<unknown>;
  dropResponse(api: string | number, options?: RuleOptions): Promise<unknown>;
  addLatency(api: string | number, ms: number, options?: { broker?: number }): Promise<unknown>;
  pauseFollower(broker: number, options?: { topic?: string; partition?: number }): Promise<unknown>;
  slowFollower(broker: number, delayMs: number,
               options?: { topic?: string; partition?: number; maxBytes?: number }): Promise<unknown>;
  resumeFollower(broker: number, options?: { topic?: string; partition?: number }): Promise<unknown>;
  cutBrokers(a: number, b: number): Promise<unknown>;
  healBrokers(a: number, b: number): Promise<unknown>;
  cutClients(broker: number, options?: { host?: string }): Promise<unknown>;
  healClients(broker: number): Promise<unknown>;
  moveLeader(topic: string, partition: number, broker?: number): Promise<unknown>;
  /** Storage faults of a broker's log dirs (logDir: only this one). */
  diskFull(broker: number, options?: { logDir?: string }): Promise<unknown>;
  failWrites(broker: number, options?: { logDir?: string }): Promise<unknown>;
  failFsyncs(broker: number, options?: { logDir?: string }): Promise<unknown>;
  slowWrites(broker: number, delayMs: number, options?: { logDir?: string }): Promise<unknown>;
  healStorage(broker: number, options?: { logDir?: string }): Promise<unknown>;
  faults(): Promise<Record<string, unknown>>;
  /** Run a fault schedule ({seed, faults: [{at_ms, op, ...}]}): its seed and step count. */
  runSchedule(schedule: Record<string, unknown>): Promise<{ seed: number; steps: number }>;
  scheduleStatus(): Promise<Record<string, unknown>>;
  /** The control plane's OpenAPI 3.1 document, as served (not camelCased). */
  openApi(): Promise<Record<string, unknown>>;
  clearFaults(): Promise<unknown>;

  reassign(topic: string, partition: number, replicas: number[]): Promise<Reassignment>;
  cancelReassignment(topic: string, partition: number): Promise<Reassignment>;
  electPreferredLeaders(topic?: string, partitions?: number[]): Promise<ElectionResult[]>;

  adversary(): Promise<AdversaryRecord>;
  setAdversaryEnabled(enabled: boolean): Promise<AdversaryRecord>;
  scaleAdversary(scale: string): Promise<AdversaryRecord>;

  rules(): Promise<FaultRule[]>;
  rule(id: string): Promise<FaultRule>;
  removeRule(id: string): Promise<unknown>;
  /** Resolves with the rule once it has fired `hits` times; rejects if not within the timeout. */
  waitForRule(id: string, hits?: number, timeoutMs?: number): Promise<FaultRule>;
  group(group: string): Promise<GroupView>;
  waitForGroup(group: string,
               options?: { state?: string; members?: number; timeoutMs?: number }): Promise<GroupView>;

  /** Start recording (or resize): the last `capacity` entries are kept. */
  enableJournal(options?: { capacity?: number }): Promise<Journal>;
  /** Forget the entries so far; recording goes on. */
  clearJournal(): Promise<Journal>;
  /** Stop recording and drop the entries. */
  disableJournal(): Promise<Journal>;
  journal(query?: JournalQuery): Promise<Journal & { entries: JournalEntry[] }>;

  addBarrier(barrier?: BarrierOptions): Promise<BarrierView>;
  barriers(): Promise<BarrierView[]>;
  barrier(id: string): Promise<BarrierView>;
  waitForBarrier(id: string, held?: number, timeoutMs?: number): Promise<BarrierView>;
  releaseBarrier(id: string, count?: number): Promise<BarrierView>;
  removeBarrier(id: string): Promise<unknown>;
}
