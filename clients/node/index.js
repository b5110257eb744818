"use strict";
// The kafka-emulator image as a Testcontainers for Node module: a Kafka cluster of several
// brokers in one container, with the emulator's control plane as methods of the started
// container (types in index.d.ts).
//
// How several brokers work behind port mapping: clients connect to the addresses the brokers
// advertise, so each broker listens inside the container on the port the host publishes for
// it. start() takes a block of consecutive free host ports (withBasePort fixes it) and binds
// them one to one. The control plane is port 8080 of the container, mapped, behind a bearer
// token of this container.
const crypto = require("node:crypto");
const net = require("node:net");
const {
  AbstractStartedContainer,
  GenericContainer,
  Wait,
  getContainerRuntimeClient,
} = require("testcontainers");

const DEFAULT_IMAGE = "kafka-emulator:latest";
const CONTROL_PORT = 8080;
const READY_LINE = "kafka-emulator ready";
const FIRST_PORT = 20000;
const LAST_PORT = 32000;

class ControlPlaneError extends Error {
  constructor(status, method, path, message) {
    super(`control plane answered ${status} to ${method} ${path}: ${message}`);
    this.name = "ControlPlaneError";
    this.status = status;
  }
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

async function freePortBlock(count) {
  for (let tries = 0; tries < 200; tries++) {
    const base = FIRST_PORT + crypto.randomInt(LAST_PORT - FIRST_PORT - count);
    let free = true;
    for (let p = base; p < base + count && free; p++) {
      free = await portFree(p);
    }
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports`);
}

class KafkaEmulatorContainer extends GenericContainer {
  constructor(image = DEFAULT_IMAGE) {
    super(image);
    this.brokerCount = 3;
    this.fixedBasePort = undefined;
    // As Testcontainers' Kafka modules: a group's first rebalance does not wait 3 s.
    this.brokerConfig = { "group.initial.rebalance.delay.ms": "0" };
    this.token = crypto.randomBytes(24).toString("hex");
    this.withWaitStrategy(Wait.forLogMessage(READY_LINE)).withStartupTimeout(60_000);
  }

  /** How many brokers (default 3), ids 1..n. */
  withBrokers(count) {
    if (!Number.isInteger(count) || count < 1) {
      throw new Error(`a cluster needs at least one broker, got ${count}`);
    }
    this.brokerCount = count;
    return this;
  }

  /** The first broker's host port (the others follow it) instead of a free block. */
  withBasePort(port) {
    this.fixedBasePort = port;
    return this;
  }

  /** "fast" (default), "kafka" or "adversarial", and optionally the seed. */
  withFidelity(mode, seed) {
    this.withEnvironment({ KAFKA_EMULATOR_FIDELITY: mode });
    if (seed !== undefined) this.withSeed(seed);
    return this;
  }

  /** The seed of the cluster's randomness and the adversary's faults. */
  withSeed(seed) {
    this.withEnvironment({ KAFKA_EMULATOR_SEED: String(seed) });
    return this;
  }

  /** A broker config by Kafka's name ("num.partitions"). */
  withBrokerConfig(key, value) {
    this.brokerConfig[key] = String(value);
    return this;
  }

  async start() {
    const client = await getContainerRuntimeClient();
    const host = client.info.containerRuntime.host;
    for (let attempt = 0; ; attempt++) {
      const base = this.fixedBasePort ?? (await freePortBlock(this.brokerCount));
      const env = {
        KAFKA_EMULATOR_BROKERS: String(this.brokerCount),
        KAFKA_EMULATOR_HOST: "0.0.0.0",
        KAFKA_EMULATOR_PORT: String(base),
        KAFKA_EMULATOR_ADVERTISED_HOST: host,
        KAFKA_EMULATOR_CONTROL_PORT: String(CONTROL_PORT),
        KAFKA_EMULATOR_CONTROL_HOST: "0.0.0.0",
        KAFKA_EMULATOR_CONTROL_TOKEN: this.token,
        KAFKA_EMULATOR_SCHEMA_REGISTRY_PORT: "",
      };
      const config = Object.entries(this.brokerConfig).map(([k, v]) => `${k}=${v}`);
      if (config.length > 0) env.KAFKA_EMULATOR_CONFIG = config.join(",");
      this.withEnvironment(env);
      // A retry starts from no ports: the last attempt's block is dropped.
      this.exposedPorts = [];
      this.createOpts.ExposedPorts = {};
      this.hostConfig.PortBindings = {};
      this.withExposedPorts(CONTROL_PORT);
      for (let n = 0; n < this.brokerCount; n++) {
        this.withExposedPorts({ container: base + n, host: base + n });
      }
      try {
        const started = await super.start();
        return new StartedKafkaEmulatorContainer(started, host, base, this.brokerCount, this.token);
      } catch (e) {
        const taken = /port is already allocated|address already in use/.test(String(e));
        if (!taken || this.fixedBasePort !== undefined || attempt === 2) throw e;
      }
    }
  }
}

function query(params) {
  const q = new URLSearchParams();
  const names = {
    api: "api", broker: "broker", clientId: "client_id", group: "group",
    transactionalId: "transactional_id", topic: "topic", error: "error", match: "match",
    since: "since", limit: "limit",
  };
  for (const [key, name] of Object.entries(names)) {
    if (params[key] !== undefined && params[key] !== null) q.set(name, String(params[key]));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

// The wire's snake_case fields of a fault, rule or barrier from the options' camelCase.
const WIRE = {
  clientId: "client_id", transactionalId: "transactional_id", delayMs: "delay_ms",
  maxBytes: "max_bytes", logDir: "log_dir", fenceAfterMs: "fence_after_ms",
};

function wire(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v !== undefined) out[WIRE[k] ?? k] = v;
  }
  return out;
}

function camel(value) {
  if (Array.isArray(value)) return value.map(camel);
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    // keys that are data (topic names, broker ids) stay as they are
    const key = /^[a-z]+(_[a-z0-9]+)+$/.test(k) ? k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()) : k;
    out[key] = k === "topics" && !Array.isArray(v) ? camelTopics(v) : camel(v);
  }
  return out;
}

function camelTopics(topics) {
  const out = {};
  for (const [name, t] of Object.entries(topics)) out[name] = camel(t);
  return out;
}

class StartedKafkaEmulatorContainer extends AbstractStartedContainer {
  constructor(started, host, basePort, brokerCount, token) {
    super(started);
    this.advertisedHost = host;
    this.basePort = basePort;
    this.brokerCount = brokerCount;
    this.token = token;
  }

  /** Every broker's host:port: what clients bootstrap from. */
  getBrokers() {
    return Array.from({ length: this.brokerCount }, (_, n) => `${this.advertisedHost}:${this.basePort + n}`);
  }

  /** The same, comma-separated. */
  getBootstrapServers() {
    return this.getBrokers().join(",");
  }

  getBrokerIds() {
    return Array.from({ length: this.brokerCount }, (_, n) => n + 1);
  }

  getControlUrl() {
    return `http://${this.getHost()}:${this.getMappedPort(CONTROL_PORT)}`;
  }

  getControlToken() {
    return this.token;
  }

  /** One JSON call to the control plane: the answer, camelCased (raw: as sent). */
  async control(method, path, body, { raw = false } = {}) {
    const resp = await fetch(this.getControlUrl() + path, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await resp.text();
    const isJson = (resp.headers.get("content-type") ?? "").startsWith("application/json");
    const parsed = isJson && text.trim() ? JSON.parse(text) : text;
    if (!resp.ok) {
      throw new ControlPlaneError(resp.status, method, path, parsed?.error ?? text);
    }
    return raw || !isJson ? parsed : camel(parsed);
  }

  // ---- the cluster -----------------------------------------------------------------
  cluster() {
    return this.control("GET", "/cluster");
  }

  async partitions(topic) {
    return (await this.control("GET", `/topics/${encodeURIComponent(topic)}`)).partitions;
  }

  metrics() {
    return this.control("GET", "/metrics");
  }

  // ---- brokers -----------------------------------------------------------------------
  stopBroker(id, { controlled, fenceAfterMs } = {}) {
    return this.control("POST", `/brokers/${id}/stop`, wire({ controlled, fenceAfterMs }));
  }

  startBroker(id) {
    return this.control("POST", `/brokers/${id}/start`, {});
  }

  controlledShutdown(id) {
    return this.control("POST", `/brokers/${id}/controlled-shutdown`, {});
  }

  // ---- faults ------------------------------------------------------------------------
  /** Apply fault operations ({op: "inject_error", api, error, ...}), all validated first. */
  fault(...faults) {
    return this.control("POST", "/faults", faults.map(wire));
  }

  injectError(api, error, options = {}) {
    return this.fault({ op: "inject_error", api, error, ...options });
  }

  observe(options = {}) {
    return this.fault({ op: "observe", ...options });
  }

  dropResponse(api, options = {}) {
    return this.fault({ op: "drop_response", api, ...options });
  }

  addLatency(api, ms, options = {}) {
    return this.fault({ op: "add_latency", api, ms, ...options });
  }

  pauseFollower(broker, options = {}) {
    return this.fault({ op: "pause_follower", broker, ...options });
  }

  slowFollower(broker, delayMs, options = {}) {
    return this.fault({ op: "slow_follower", broker, delayMs, ...options });
  }

  resumeFollower(broker, options = {}) {
    return this.fault({ op: "resume_follower", broker, ...options });
  }

  cutBrokers(a, b) {
    return this.fault({ op: "cut_brokers", brokers: [a, b] });
  }

  healBrokers(a, b) {
    return this.fault({ op: "heal_brokers", brokers: [a, b] });
  }

  cutClients(broker, options = {}) {
    return this.fault({ op: "cut_clients", broker, ...options });
  }

  healClients(broker) {
    return this.fault({ op: "heal_clients", broker });
  }

  moveLeader(topic, partition, broker) {
    return this.fault({ op: "move_leader", topic, partition, broker });
  }

  diskFull(broker, options = {}) {
    return this.fault({ op: "disk_full", broker, ...options });
  }

  failWrites(broker, options = {}) {
    return this.fault({ op: "fail_writes", broker, ...options });
  }

  failFsyncs(broker, options = {}) {
    return this.fault({ op: "fail_fsyncs", broker, ...options });
  }

  slowWrites(broker, delayMs, options = {}) {
    return this.fault({ op: "slow_writes", broker, delayMs, ...options });
  }

  healStorage(broker, options = {}) {
    return this.fault({ op: "heal_storage", broker, ...options });
  }

  faults() {
    return this.control("GET", "/faults");
  }

  /** Run a fault schedule ({seed, faults: [{at_ms, op, ...}]}, docs/faults.md). */
  runSchedule(schedule) {
    return this.control("POST", "/faults/schedule", schedule);
  }

  scheduleStatus() {
    return this.control("GET", "/faults/schedule");
  }

  /** The control plane's OpenAPI 3.1 document, as served. */
  openApi() {
    return this.control("GET", "/openapi.json", undefined, { raw: true });
  }

  clearFaults() {
    return this.control("DELETE", "/faults", {});
  }

  // ---- reassignments, elections ----------------------------------------------------
  reassign(topic, partition, replicas) {
    return this.control("POST", "/reassignments", { topic, partition, replicas });
  }

  cancelReassignment(topic, partition) {
    return this.control("DELETE", "/reassignments", { topic, partition });
  }

  async electPreferredLeaders(topic, partitions) {
    const body = topic === undefined ? {} : wire({ topic, partitions });
    return (await this.control("POST", "/elections/preferred", body)).results;
  }

  // ---- the adversary -----------------------------------------------------------------
  adversary() {
    return this.control("GET", "/adversary");
  }

  setAdversaryEnabled(enabled) {
    return this.control("POST", "/adversary", enabled ? { on: true } : { off: true });
  }

  scaleAdversary(scale) {
    return this.control("POST", "/adversary", { scale });
  }

  // ---- fault rules, groups -----------------------------------------------------------
  async rules() {
    return (await this.control("GET", "/rules")).rules;
  }

  rule(id) {
    return this.control("GET", `/rules/${encodeURIComponent(id)}`);
  }

  removeRule(id) {
    return this.control("DELETE", `/rules/${encodeURIComponent(id)}`);
  }

  /** Wait until a rule has fired `hits` times; rejects, naming its count, if it has not. */
  async waitForRule(id, hits = 1, timeoutMs = 10_000) {
    const answer = await this.control("POST", `/rules/${encodeURIComponent(id)}/wait`, {
      hits, timeout_ms: timeoutMs,
    });
    if (!answer.reached) {
      throw new Error(`rule ${id} fired ${answer.rule.hits} of ${hits} times within ${timeoutMs} ms`);
    }
    return answer.rule;
  }

  group(group) {
    return this.control("GET", `/groups/${encodeURIComponent(group)}`);
  }

  async waitForGroup(group, { state = "Stable", members, timeoutMs = 10_000 } = {}) {
    const answer = await this.control("POST", `/groups/${encodeURIComponent(group)}/wait`,
      { state, members, timeout_ms: timeoutMs });
    if (!answer.reached) {
      throw new Error(`group ${group} not ${state} (members ${members ?? "any"}) within ` +
        `${timeoutMs} ms: ${JSON.stringify(answer.group)}`);
    }
    return answer.group;
  }

  // ---- the request journal -------------------------------------------------------------
  /** Start recording (or resize): the last `capacity` entries are kept. */
  enableJournal({ capacity } = {}) {
    return this.control("POST", "/journal", { capacity });
  }

  /** Forget the entries recorded so far; recording goes on. */
  clearJournal() {
    return this.control("POST", "/journal", { clear: true });
  }

  /** Stop recording and drop the entries. */
  disableJournal() {
    return this.control("DELETE", "/journal");
  }

  /** The journal's state and the entries the query selects, oldest first. */
  journal(q = {}) {
    return this.control("GET", `/journal${query(q)}`);
  }

  // ---- barriers ------------------------------------------------------------------------
  addBarrier(barrier = {}) {
    return this.control("POST", "/barriers", wire(barrier));
  }

  async barriers() {
    return (await this.control("GET", "/barriers")).barriers;
  }

  barrier(id) {
    return this.control("GET", `/barriers/${encodeURIComponent(id)}`);
  }

  async waitForBarrier(id, held = 1, timeoutMs = 10_000) {
    const answer = await this.control("POST", `/barriers/${encodeURIComponent(id)}/wait`,
      { held, timeout_ms: timeoutMs });
    if (!answer.reached) {
      throw new Error(`barrier ${id} holds ${answer.barrier.held} of ${held} requests after ${timeoutMs} ms`);
    }
    return answer.barrier;
  }

  releaseBarrier(id, count) {
    return this.control("POST", `/barriers/${encodeURIComponent(id)}/release`,
      count === undefined ? {} : { count });
  }

  removeBarrier(id) {
    return this.control("DELETE", `/barriers/${encodeURIComponent(id)}`);
  }
}

module.exports = {
  ControlPlaneError,
  DEFAULT_IMAGE,
  KafkaEmulatorContainer,
  StartedKafkaEmulatorContainer,
};
