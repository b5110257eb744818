"""Each broker's own view of the cluster metadata, a little behind the controller's.

On Kafka 4.4 the controller commits a change (a topic created or deleted, partitions
added, a leader or ISR moved, a topic config altered) to the metadata log, and every
broker learns it when its own metadata publisher applies the log: a few milliseconds
later, each broker at its own pace. A request that reaches another broker right after
an admin call can miss the change (UNKNOWN_TOPIC_OR_PARTITION for a topic just created,
the topic still there after DeleteTopics, NOT_LEADER_OR_FOLLOWER from a leader that has
not learned it leads). The emulator's brokers all read one ClusterState, so under
``--fidelity fast`` metadata is never stale; under ``kafka`` and ``adversarial`` this
module keeps, per topic with a change not yet seen by every broker, the images the
brokers that lag still see (docs/fidelity.md; the envelope is measured by
conformance/metadata_envelope.py, the ``metadata-propagation`` entry of
emulator/fidelity/differences.py's DIFFERENCES).

How: a change marks its topic dirty at the time of the change; the next lookup (or the
server's tick) takes an image of the topic as it now is and gives each broker a time
from which it sees it, ``change time + lag``, never earlier than the previous change it
saw (a broker applies the log in order). A lookup answers, for one broker and one topic,
the image that broker sees now, or ``CURRENT`` when it sees the controller's state (the
handler then reads the cluster as under ``fast``). Topics with nothing pending cost
nothing, and in ``fast`` nothing is recorded at all (``active`` is False).

Adversarial mode (and tests) make one broker much staler with :meth:`set_lag`.

This module is a leaf of the domain: it knows the images it is given by ``build`` and
the clock, nothing of topics or partitions (emulator/cluster/metadata.py wires it).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from emulator.cluster.partition import check_current_leader_epoch
from wire.codec import EncodedList
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

# The lag of a broker's metadata behind the controller's commit, in ms (low, high): each
# change reaches each broker after a lag drawn uniformly from this range (seeded), in
# commit order. Measured on Kafka 4.4.0, 3 brokers and a controller on one busy 2-core
# machine (conformance/metadata_envelope.py; docs/metadata-envelope.md, and the
# "metadata-propagation" entry of emulator/fidelity/differences.py): the broker asked and
# the others applied a change a median 0-8 ms (lower bound) to 9-36 ms (upper bound) after the admin
# answer, the slowest trials 25-300 ms; the first request right after the answer missed
# it in 25-68% of trials. 1-30 ms sits inside that: a request sent at once nearly always misses
# the change here (a client must wait, as it must on Kafka), and a client that waits for
# it does not wait long. ``set_lag`` moves one broker out to any lag.
DEFAULT_LAG_MS = (1, 30)


@dataclass(frozen=True, slots=True)
class PartitionImage:
    """What a broker's metadata says of one partition."""

    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicImage:
    """What a broker's metadata says of one topic: as Kafka's TopicImage, plus the
    Metadata answer's partition entries as they were built then (read only)."""

    name: str
    id: bytes
    is_internal: bool
    partitions: tuple[PartitionImage, ...]
    configs: Mapping[str, str]  # the topic's dynamic configs
    entries: EncodedList = field(compare=False)  # Metadata's partition entries


class _Current(enum.Enum):
    """The broker sees the controller's state: read the cluster itself. An enum of one
    member, so ``x is CURRENT`` narrows a lookup's answer to the image (or None)."""

    CURRENT = "CURRENT"

    def __repr__(self) -> str:
        return "CURRENT"


CURRENT: Final = _Current.CURRENT
Current: TypeAlias = Literal[_Current.CURRENT]  # the type of CURRENT, for annotations


@dataclass(slots=True)
class _Entry:
    image: TopicImage | None  # None: the topic does not exist (deleted)
    visible: dict[int, int]  # broker id -> when that broker sees it (ms)
    everywhere: int  # when every broker sees it


@dataclass(slots=True)
class _Pending:
    """One topic's images not yet seen by every broker: ``base`` is what a broker sees
    before the first entry (the image every broker has seen)."""

    base: TopicImage | None
    entries: list[_Entry]


class MetadataViews:
    """The per-broker metadata views of one cluster (see the module docstring)."""

    def __init__(self, now: Callable[[], int], brokers: Iterable[int],
                 build: Callable[[str], TopicImage | None],
                 topics: Callable[[], Iterable[str]], *, active: bool,
                 seed: int = 0) -> None:
        self._now = now
        self._build = build  # the topic's image as the controller has it now
        self._topics = topics  # the names of every topic now
        self.active = active
        self._rng = random.Random(seed ^ 0x6D64)  # apart from state.rng: fast is unchanged
        self._brokers = list(brokers)
        self._default = DEFAULT_LAG_MS
        self._lag: dict[int, tuple[int, int]] = {}
        self._images: dict[str, TopicImage] = {}  # the last image of every topic (active)
        self._dirty: dict[str, int] = {}  # topic -> time of its first change not imaged
        self._pending: dict[str, _Pending] = {}
        self._last_visible: dict[int, int] = {}  # broker -> its newest entry's time
        self._pruned_at = -1

    # ---- configuration ----------------------------------------------------------------
    def set_lag(self, broker_id: int, ms: int | None, jitter_ms: int = 0) -> None:
        """Broker ``broker_id`` learns each later change ``ms`` (to ``ms + jitter_ms``)
        after the controller commits it; None restores the default envelope. Turns the
        views on (``active``) if they were off, so that a test or adversarial mode can
        make one broker much staler than Kafka's envelope. Changes already committed
        keep the times they were given."""
        if ms is None:
            self._lag.pop(broker_id, None)
        else:
            if ms < 0 or jitter_ms < 0:
                raise ValueError("a metadata lag is a time: ms and jitter_ms >= 0")
            self._lag[broker_id] = (ms, ms + jitter_ms)
        if broker_id not in self._brokers:
            self._brokers.append(broker_id)
        self.activate()

    def lag_of(self, broker_id: int) -> tuple[int, int]:
        """The (low, high) lag in ms a change takes to reach ``broker_id``."""
        return self._lag.get(broker_id, self._default)

    def activate(self) -> None:
        """Turn the views on (a cluster built in ``fast``): every topic's image is taken
        now, as the one every broker has seen."""
        if self.active:
            return
        self.active = True
        for name in list(self._topics()):
            img = self._build(name)
            if img is not None:
                self._images[name] = img

    def add_broker(self, broker_id: int) -> None:
        if broker_id not in self._brokers:
            self._brokers.append(broker_id)

    # ---- news -------------------------------------------------------------------------
    def changed(self, name: str) -> None:
        """The controller changed topic ``name`` (created, deleted, partitions added,
        leader/ISR/replicas moved, configs): the brokers learn it after their lag. The
        image is taken at the next lookup or flush, so that one operation's many
        partition changes make one change."""
        if self.active and name not in self._dirty:
            self._dirty[name] = self._now()

    def before_change(self) -> None:
        """The controller is about to change a topic: image the changes of an earlier
        time first, so that each broker can see the state between them (changes of the
        same millisecond make one image, as one operation's records do)."""
        if self._dirty:
            now = self._now()
            if any(at < now for at in self._dirty.values()):
                self.flush(now)

    def flush(self, now: int | None = None) -> None:
        """Take the images of the topics changed since the last flush (and let go of
        what every broker has seen). Cheap when nothing changed; the server's tick
        calls it too (``ClusterMetadata.tick_hooks``)."""
        if self._dirty:
            dirty, self._dirty = self._dirty, {}
            for name, at in dirty.items():
                self._record(name, at)
        if self._pending:
            t = self._now() if now is None else now
            if t != self._pruned_at:
                self._pruned_at = t
                self._prune(t)

    def _record(self, name: str, at: int) -> None:
        img = self._build(name)
        before = self._images.get(name)
        if img is None:
            self._images.pop(name, None)
        else:
            self._images[name] = img
        visible: dict[int, int] = {}
        for b in self._brokers:
            lo, hi = self.lag_of(b)
            t = at + (lo if hi <= lo else self._rng.randint(lo, hi))
            t = max(t, self._last_visible.get(b, t))  # in order, as the log is applied
            self._last_visible[b] = t
            visible[b] = t
        entry = _Entry(img, visible, max(visible.values(), default=at))
        pending = self._pending.get(name)
        if pending is None:
            self._pending[name] = _Pending(before, [entry])
        else:
            pending.entries.append(entry)

    def _prune(self, now: int) -> None:
        done = []
        for name, pending in self._pending.items():
            entries = pending.entries
            k = 0
            while k < len(entries) and entries[k].everywhere <= now:
                pending.base = entries[k].image
                k += 1
            if k:
                del entries[:k]
            if not entries:
                done.append(name)
        for name in done:
            del self._pending[name]

    # ---- lookups ----------------------------------------------------------------------
    def settled(self) -> bool:
        """Whether every broker sees the controller's state now (no lookup differs). While
        one does not, what it answers changes with time alone, without a change to mark
        (an incremental fetch then reads all its partitions: fetch_sessions)."""
        if self._pending or self._dirty:
            self.flush()  # let go of what every broker has seen by now
        return not self._pending and not self._dirty

    def view(self, broker_id: int, name: str) -> TopicImage | None | Current:
        """The image of topic ``name`` broker ``broker_id`` sees now (None: it does not
        know the topic), or ``CURRENT`` when it sees the controller's state."""
        if not self._pending and not self._dirty:
            return CURRENT
        self.flush()
        pending = self._pending.get(name)
        if pending is None:
            return CURRENT
        now = self._now()
        img = pending.base
        entries = pending.entries
        for i, e in enumerate(entries):
            if e.visible.get(broker_id, e.everywhere) > now:
                return img
            img = e.image
            if i == len(entries) - 1:
                return CURRENT  # it sees the newest image: the controller's state
        return img

    def stale_names(self) -> list[str]:
        """The topics some broker does not see as the controller does (a listing of
        every topic asks these of ``view``; the others are as the cluster has them)."""
        self.flush()
        return list(self._pending)

    def name_of_id(self, broker_id: int, topic_id: bytes) -> str | None | Current:
        """The name broker ``broker_id`` knows topic id ``topic_id`` by (None: unknown to
        it), or ``CURRENT`` when no pending change concerns that id."""
        if not self._pending and not self._dirty:
            return CURRENT
        self.flush()
        for name, pending in list(self._pending.items()):  # view() may prune
            ids = {pending.base.id if pending.base else None,
                   *(e.image.id for e in pending.entries if e.image is not None)}
            if topic_id in ids:
                img = self.view(broker_id, name)
                if img is CURRENT:
                    return CURRENT
                return name if img is not None and img.id == topic_id else None
        return CURRENT

    def check(self, broker_id: int, topic: str, index: int, current_leader_epoch: int = -1,
              leader: bool = True) -> None:
        """Raise what broker ``broker_id`` answers, from its metadata, a request for
        partition ``topic``-``index``, when its view differs from the controller's
        (nothing when it sees the controller's state: the handler's own checks follow).

        As ReplicaManager.getPartitionOrError and Partition.localLogWithEpochOrThrow: a
        partition the broker does not know is UNKNOWN_TOPIC_OR_PARTITION, one it does
        not host NOT_LEADER_OR_FOLLOWER; then the client's current leader epoch against
        the broker's (FENCED_LEADER_EPOCH older, UNKNOWN_LEADER_EPOCH newer); then, for
        a leader's request, NOT_LEADER_OR_FOLLOWER unless the broker knows it leads."""
        if not self._pending and not self._dirty:
            return
        img = self.view(broker_id, topic)
        if img is CURRENT:
            return
        if img is None or not 0 <= index < len(img.partitions):
            raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
        p = img.partitions[index]
        if broker_id not in p.replicas:
            raise KafkaError(E.NOT_LEADER_OR_FOLLOWER)
        check_current_leader_epoch(current_leader_epoch, p.leader_epoch)
        if leader and p.leader != broker_id:
            raise KafkaError(E.NOT_LEADER_OR_FOLLOWER)

    def leader_hint(self, broker_id: int, topic: str, index: int) -> tuple[int, int] | None:
        """(leader, leader epoch) of the partition in broker ``broker_id``'s view, for
        the current-leader hint of a NOT_LEADER_OR_FOLLOWER answer (Kafka takes it from
        the broker's metadata cache); None when it sees the controller's state, or when
        its view still names the broker itself the leader: the refusal then came from
        the controller's state, and on Kafka a broker's metadata cache takes a new image
        before its ReplicaManager acts on it (BrokerMetadataPublisher), so a broker
        never refuses as a follower while its cache names itself the leader."""
        if not self._pending and not self._dirty:
            return None
        img = self.view(broker_id, topic)
        if img is CURRENT:
            return None
        if img is None or not 0 <= index < len(img.partitions):
            return (-1, -1)
        p = img.partitions[index]
        if p.leader == broker_id:
            return None
        return p.leader, p.leader_epoch

    def settled_in(self, name: str) -> int:
        """How many ms until every broker sees topic ``name`` as the controller has it
        now (0: they all do already). A harness that creates a topic for a test waits
        this long, as a Kafka harness waits until every broker knows the leaders."""
        if not self._pending and not self._dirty:
            return 0
        self.flush()
        pending = self._pending.get(name)
        if pending is None or not pending.entries:
            return 0
        return max(0, pending.entries[-1].everywhere - self._now())

    def caught_up(self, broker_id: int | None = None) -> bool:
        """Whether ``broker_id`` (every broker when None) sees every committed change."""
        self.flush()
        if broker_id is None:
            return not self._pending
        return all(self.view(broker_id, n) is CURRENT for n in list(self._pending))
