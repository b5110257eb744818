"""The fault methods of a control handle, each one operation of the table.

``Cluster`` (emulator.runtime: in-process, the pytest plugin's ``kafka_control``) and
``KafkaEmulatorContainer`` (emulator.containers: over the HTTP control plane) both
are a ``ControlHandle``: they say how one operation is applied (``fault``), and the
methods here say which operation each call is, so a method is written once for both.
"""

from __future__ import annotations

from typing import Any


def operation(kind: str, **fields: Any) -> dict:
    """An operation of emulator.faults' vocabulary; fields left None are not sent."""
    return {"op": kind, **{k: v for k, v in fields.items() if v is not None}}


class ControlHandle:
    """Fault methods on top of ``fault(op)``; each returns what ``fault`` returns."""

    def fault(self, op: dict) -> Any:
        raise NotImplementedError

    def operation(self, name: str, **fields: Any) -> Any:
        """An operation of the table that is not a fault (rules, groups, the journal,
        barriers), by name with its fields."""
        raise NotImplementedError

    def controlled_shutdown(self, broker_id: int) -> Any:
        """Move leadership off a broker, then stop it (Kafka's controlled shutdown)."""
        return self.fault(operation("controlled_shutdown", broker=broker_id))

    def pause_follower(self, broker: int, topic: str | None = None,
                       partition: int | None = None) -> Any:
        return self.fault(operation("pause_follower", broker=broker, topic=topic,
                                    partition=partition))

    def slow_follower(self, broker: int, delay_ms: int, max_bytes: int | None = None,
                      topic: str | None = None, partition: int | None = None) -> Any:
        return self.fault(operation("slow_follower", broker=broker, delay_ms=delay_ms,
                                    max_bytes=max_bytes, topic=topic, partition=partition))

    def resume_follower(self, broker: int, topic: str | None = None,
                        partition: int | None = None) -> Any:
        return self.fault(operation("resume_follower", broker=broker, topic=topic,
                                    partition=partition))

    def cut_brokers(self, a: int, b: int) -> Any:
        """Cut the network between two brokers: replication between them stops."""
        return self.fault(operation("cut_brokers", brokers=[a, b]))

    def heal_brokers(self, a: int, b: int) -> Any:
        return self.fault(operation("heal_brokers", brokers=[a, b]))

    def cut_clients(self, broker: int, host: str | None = None) -> Any:
        """Cut clients (all, or one host) off a broker: connections drop and are refused."""
        return self.fault(operation("cut_clients", broker=broker, host=host))

    def heal_clients(self, broker: int) -> Any:
        return self.fault(operation("heal_clients", broker=broker))

    def inject_error(self, api: int | str, error: int | str, count: int = 1,
                     broker: int | None = None, topic: str | None = None,
                     partition: int | None = None, client_id: str | None = None,
                     group: str | None = None, transactional_id: str | None = None,
                     match: str | None = None, after: int | None = None,
                     rule_id: str | None = None) -> Any:
        """Answer the next ``count`` requests of an API with an error code, where Kafka
        puts that API's errors (emulator.handlers.errors). With ``topic`` (and
        ``partition``) only the requests naming them count, and only their items get
        the error while the rest of the request is served: ``inject_error("Produce",
        "NOT_LEADER_OR_FOLLOWER", topic="orders", partition=3)``. With ``client_id``,
        ``group``, ``transactional_id`` or ``match`` (docs/faults.md, the match language)
        only those requests count; ``after=2`` lets two through first (the third fails).
        A rule naming a group, transactional id or topic and no ``broker`` fires on the
        broker owning it. Its hits: ``rule(rule_id)``, ``wait_for_rule(rule_id, n)``."""
        return self.fault(operation("inject_error", api=api, error=error, count=count,
                                    broker=broker, topic=topic, partition=partition,
                                    client_id=client_id, group=group,
                                    transactional_id=transactional_id, match=match,
                                    after=after, id=rule_id))

    def observe(self, api: int | str | None = None, broker: int | None = None,
                topic: str | None = None, partition: int | None = None,
                client_id: str | None = None, group: str | None = None,
                transactional_id: str | None = None, match: str | None = None,
                rule_id: str | None = None) -> Any:
        """Count the requests a rule selects without failing any: ``observe("OffsetCommit",
        group="billing", rule_id="commits")``, then ``rule("commits")["hits"]``."""
        return self.fault(operation("observe", api=api, broker=broker, topic=topic,
                                    partition=partition, client_id=client_id, group=group,
                                    transactional_id=transactional_id, match=match,
                                    id=rule_id))

    # ---- rules, groups, the journal, barriers (docs/journal.md) ---------------------------
    def rules(self) -> list[dict]:
        """Every request rule with its hits."""
        return list(self.operation("rules")["rules"])

    def rule(self, rule_id: str) -> dict:
        return dict(self.operation("rule", rule=rule_id))

    def remove_rule(self, rule_id: str) -> dict:
        return dict(self.operation("remove_rule", rule=rule_id)["removed"])

    def wait_for_rule(self, rule_id: str, hits: int = 1, timeout_ms: int = 10_000) -> dict:
        """Block until the rule has fired ``hits`` times; TimeoutError (saying its count)
        when it has not within the timeout. Returns the rule."""
        out = self.operation("wait_rule", rule=rule_id, hits=hits, timeout_ms=timeout_ms)
        if not out["reached"]:
            raise TimeoutError(f"rule {rule_id!r} fired {out['rule']['hits']} of {hits} "
                               f"times in {timeout_ms} ms")
        return dict(out["rule"])

    def group(self, group_id: str) -> dict:
        """A group's type, state, generation, members and coordinator."""
        return dict(self.operation("group", group=group_id))

    def wait_for_group(self, group_id: str, members: int | None = None,
                       state: str = "Stable", timeout_ms: int = 10_000) -> dict:
        """Block until the group is in ``state`` with ``members`` members (None: any);
        TimeoutError otherwise. Returns the group."""
        out = self.operation("wait_group", group=group_id, members=members, state=state,
                             timeout_ms=timeout_ms)
        if not out["reached"]:
            raise TimeoutError(f"group {group_id!r} is {out['group']} after {timeout_ms} ms, "
                               f"not {state} with {members} member(s)")
        return dict(out["group"])

    def journal_on(self, capacity: int | None = None, clear: bool | None = None) -> dict:
        """Start recording every request and its answer (the last ``capacity``)."""
        return dict(self.operation("journal_on", capacity=capacity, clear=clear))

    def journal_off(self) -> dict:
        return dict(self.operation("journal_off"))

    def journal(self, api: int | str | None = None, broker: int | None = None,
                client_id: str | None = None, group: str | None = None,
                transactional_id: str | None = None, topic: str | None = None,
                error: str | None = None, match: str | None = None, since: int | None = None,
                limit: int | None = None) -> list[dict]:
        """The journal's entries these filters select, in the order they were answered."""
        return list(self.operation(
            "journal", api=api, broker=broker, client_id=client_id, group=group,
            transactional_id=transactional_id, topic=topic, error=error, match=match,
            since=since, limit=limit)["entries"])

    def add_barrier(self, api: int | str | None = None, broker: int | None = None,
                    client_id: str | None = None, group: str | None = None,
                    transactional_id: str | None = None, topic: str | None = None,
                    match: str | None = None, barrier_id: str | None = None,
                    count: int | None = None) -> dict:
        """Hold the requests it selects (the first ``count``; None: all) until released."""
        return dict(self.operation(
            "add_barrier", api=api, broker=broker, client_id=client_id, group=group,
            transactional_id=transactional_id, topic=topic, match=match, id=barrier_id,
            count=count))

    def barrier(self, barrier_id: str) -> dict:
        return dict(self.operation("barrier", barrier=barrier_id))

    def wait_for_barrier(self, barrier_id: str, held: int = 1,
                         timeout_ms: int = 10_000) -> dict:
        """Block until the barrier holds ``held`` requests; TimeoutError otherwise."""
        out = self.operation("wait_barrier", barrier=barrier_id, held=held,
                             timeout_ms=timeout_ms)
        if not out["reached"]:
            raise TimeoutError(f"barrier {barrier_id!r} holds {out['barrier']['held']} of "
                               f"{held} request(s) after {timeout_ms} ms")
        return dict(out["barrier"])

    def release_barrier(self, barrier_id: str, count: int | None = None) -> dict:
        """Let the oldest ``count`` held requests go (None: all); it keeps holding."""
        return dict(self.operation("release_barrier", barrier=barrier_id, count=count))

    def remove_barrier(self, barrier_id: str) -> dict:
        """Release everything it holds and remove it."""
        return dict(self.operation("remove_barrier", barrier=barrier_id)["removed"])

    def add_latency(self, api: int | str, ms: int, broker: int | None = None) -> Any:
        """Delay every request of an API by ``ms`` (0 removes it)."""
        return self.fault(operation("add_latency", api=api, ms=ms, broker=broker))

    def drop_response(self, api: int | str, count: int = 1, broker: int | None = None,
                      client_id: str | None = None, group: str | None = None,
                      transactional_id: str | None = None, topic: str | None = None,
                      match: str | None = None, after: int | None = None,
                      rule_id: str | None = None) -> Any:
        """Apply the next ``count`` requests of an API but drop their responses (the
        selection as ``inject_error``'s)."""
        return self.fault(operation("drop_response", api=api, count=count, broker=broker,
                                    client_id=client_id, group=group,
                                    transactional_id=transactional_id, topic=topic,
                                    match=match, after=after, id=rule_id))

    def move_leader(self, topic: str, partition: int, broker: int | None = None) -> Any:
        """Move a partition's leader to another in-sync replica (``broker``; default: the
        preferred one if it is not leading, else the next in-sync one)."""
        return self.fault(operation("move_leader", topic=topic, partition=partition,
                                    broker=broker))

    # ---- storage faults (docs/faults.md): what follows is Kafka's log dir failure ------
    def disk_full(self, broker: int, log_dir: str | None = None) -> Any:
        """The broker's log dir (or all of them) is full: its next write fails and the
        directory goes offline (KAFKA_STORAGE_ERROR, leadership moves away; the broker
        halts when no directory is left)."""
        return self.fault(operation("disk_full", broker=broker, log_dir=log_dir))

    def fail_writes(self, broker: int, log_dir: str | None = None) -> Any:
        """Writes to the broker's log dir fail (EIO): as ``disk_full``."""
        return self.fault(operation("fail_writes", broker=broker, log_dir=log_dir))

    def fail_fsyncs(self, broker: int, log_dir: str | None = None) -> Any:
        """fsyncs of the log dir fail: it goes offline at its next flush or checkpoint
        (replica.high.watermark.checkpoint.interval.ms)."""
        return self.fault(operation("fail_fsyncs", broker=broker, log_dir=log_dir))

    def slow_writes(self, broker: int, delay_ms: int, log_dir: str | None = None) -> Any:
        """Each write to the log dir takes ``delay_ms``: acknowledgements wait (0 removes)."""
        return self.fault(operation("slow_writes", broker=broker, delay_ms=delay_ms,
                                    log_dir=log_dir))

    def heal_storage(self, broker: int, log_dir: str | None = None) -> Any:
        """End the broker's storage faults; a failed dir is back once the broker restarts."""
        return self.fault(operation("heal_storage", broker=broker, log_dir=log_dir))

    def clear_faults(self) -> Any:
        return self.fault(operation("clear"))
