"""``DataDir``: load a cluster from a data directory, and keep the directory in step.

Wired in by ``emulator.runtime.Cluster(data_dir=...)`` (``--data-dir``,
``KAFKA_EMULATOR_DATA_DIR``): ``load`` before the listeners open, ``on_event`` on
the domain's events (an append is on disk before the append returns, so before
any acknowledgement), ``sync`` on every server tick (markers, leader changes,
retention, cleaning, metadata), ``close`` at shutdown. See emulator/storage/disk.py
for the layout and the durability it gives.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import shutil
import time
from bisect import bisect_left

from emulator.cluster.events import Appended, DomainEvent, LogCleaned, TopicCreated, TopicDeleted
from emulator.cluster.log_dirs import replica_log_dir
from emulator.cluster.partition import Partition
from emulator.cluster.ports import LogDirFailure
from emulator.coordinators.coordinator_log import replay
from emulator.coordinators.share.state_log import replay as replay_share_state
from emulator.log import Log
from emulator.security.acl import AclStore
from emulator.security.scram import CredentialStore
from emulator.services import Services
from emulator.storage.disk import (
    META,
    PARTITION_META,
    LoadedBatch,
    PartitionFiles,
    SegmentFile,
    StorageError,
    _atomic_json,
    fingerprint,
    map_file,
    release_freed_heap,
    scan_segment,
    segment_name,
)
from wire.records import control_batch, decode_records, read_header

log = logging.getLogger("kafka_emulator.storage")
MAX_LONG = (1 << 63) - 1
FORMAT_VERSION = 1
SECURITY = "security.json"  # ACLs and salted SCRAM credentials (never plain passwords)
# the C heap is trimmed at most this often, at the first tick after a segment is mapped
TRIM_INTERVAL_S = 1.0


class DataDir:
    """One cluster's data directory."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        try:
            os.makedirs(self.path, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot create data directory {self.path}: {e}") from e
        self.parts: dict[tuple[str, int], PartitionFiles] = {}
        self._meta_text = ""
        self.loaded_topics = 0
        self.loaded_batches = 0
        self.truncated: list[str] = []  # the recovery log lines, for tests and tools
        self._meta_error = ""  # the last metadata write error told (once)
        # segments mapped since the heap was last trimmed (their batches' bytes freed),
        # and how many trims so far: disk.release_freed_heap says why
        self.mapped_since_trim = 0
        self.heap_trims = 0
        self._last_trim = 0.0

    # ---- load ----------------------------------------------------------------------
    def load(self, state) -> None:
        """Recreate topics and logs; rebuild producer state from the batches."""
        meta_path = os.path.join(self.path, META)
        if not os.path.exists(meta_path):
            return
        try:
            with open(meta_path) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            raise StorageError(f"{meta_path} is unreadable ({e}): the data directory is "
                               "damaged; move it away to start empty") from e
        if meta.get("format") != FORMAT_VERSION:
            raise StorageError(f"{meta_path}: unknown format {meta.get('format')!r}")
        started = time.monotonic()
        state.cluster_id = meta.get("cluster_id", state.cluster_id)
        for name, t in sorted(meta["topics"].items()):
            self._load_topic(state, name, t)
        self._meta_text = json.dumps(self._meta(state), sort_keys=True)
        log.info("loaded %d topics, %d batches from %s in %.0f ms", self.loaded_topics,
                 self.loaded_batches, self.path, (time.monotonic() - started) * 1000)

    def _load_topic(self, state, name: str, t: dict) -> None:
        parts = t["partitions"]
        topic = state.create_topic(name, assignments={i: p["replicas"]
                                                      for i, p in enumerate(parts)},
                                   configs=t.get("configs") or {})
        del state.topics_by_id[topic.id]
        topic.id = bytes.fromhex(t["id"])
        state.topics_by_id[topic.id] = topic
        for p, saved in zip(topic.partitions, parts, strict=True):
            p.topic_id = topic.id
            self._load_partition(state, p, saved)
        self.loaded_topics += 1

    def _load_partition(self, state, p: Partition, saved: dict) -> None:
        d = os.path.join(self.path, f"{p.topic}-{p.index}")
        os.makedirs(d, exist_ok=True)
        pf = PartitionFiles(d)
        pmeta = {}
        try:
            with open(os.path.join(d, PARTITION_META)) as f:
                pmeta = json.load(f)
        except (OSError, ValueError):
            pass
        files = sorted(n for n in os.listdir(d) if n.endswith(".log"))
        segments: list[list] = []
        expect = 0
        maps: dict[int, object] = {}
        for k, n in enumerate(files):
            path = os.path.join(d, n)
            closed = k + 1 < len(files)
            mm = map_file(path) if closed else None  # closed segments stay on disk
            batches, valid, why = scan_segment(path, expect, mm)
            if why is not None and mm is not None:
                batches = [LoadedBatch(bytes(x.data), x.base, x.last, x.epoch, x.max_ts)
                           for x in batches]  # copies: this file is cut below
                mm = None
            if mm is not None:
                maps[int(n[:-4])] = mm
            if why is not None:
                dropped = files[k + 1:]
                line = (f"{p.topic}-{p.index}: {n}: {why}; truncating the log to offset "
                        f"{batches[-1].last + 1 if batches else int(n[:-4])} "
                        f"({os.path.getsize(path) - valid} bytes cut, "
                        f"{len(dropped)} later segment files removed)")
                log.warning("Log recovery: %s", line)
                self.truncated.append(line)
                with open(path, "r+b") as f:
                    f.truncate(valid)
                for later in dropped:
                    os.unlink(os.path.join(d, later))
            segments.append([int(n[:-4]), batches])
            if batches:
                expect = batches[-1].last + 1
            if why is not None:
                break
        lso = int(pmeta.get("log_start_offset", 0))
        start = segments[0][0] if segments else lso
        logs = {b: Log(start) for b in p.replicas}
        for lg in logs.values():
            for k, (base, batches) in enumerate(segments):
                if k:
                    lg.segments.roll(max(base, lg.log_end_offset))
                for x in batches:
                    lg.append_as_follower(x.data, x.base, x.last, x.epoch, x.max_ts)
            if lso > lg.log_start_offset:
                lg.delete_before(lso)
        p.logs = logs
        pf.log_start_offset = lso
        pf.cleaner_checkpoint = int(pmeta.get("cleaner_checkpoint", 0))
        for base, batches in segments:
            seg = pf._open_segment(base)
            seg.mapped = maps.get(base)
            for x in batches:
                seg.bases.append(x.base)
                seg.positions.append(seg.size)
                seg.fingerprints.append(fingerprint(x.data))
                seg.size += len(x.data)
        pf.written_end = max((x.last + 1 for _, bs in segments for x in bs), default=start)
        self.loaded_batches += sum(len(bs) for _, bs in segments)
        if pf.cleaner_checkpoint:
            state.cleaner.checkpoints[(p.topic_id, p.index)] = pf.cleaner_checkpoint
        # epochs only move forward: the restarted leader's epoch is past every batch's
        epochs = [x.epoch for _, bs in segments for x in bs]
        p.leader_epoch = max([int(saved.get("leader_epoch", 0))] + epochs) + 1
        p.partition_epoch = int(saved.get("partition_epoch", 0)) + 1
        if p.leader >= 0:
            p.leader_log.assign_epoch(p.leader_epoch, p.leader_log.log_end_offset)
        leo = p.leader_log.log_end_offset if p.leader >= 0 else pf.written_end
        p.high_watermark = leo
        # each replica knows the high watermark it had (Kafka's replication-offset
        # checkpoint): a follower serves up to it, and keeps it if it becomes leader
        # before its first fetch, instead of starting from 0
        for b, lg in p.logs.items():
            if b != p.leader:
                p.follower_hw[b] = min(leo, lg.log_end_offset)
        p.reset_follower_states(state.now())
        for st in p.followers.values():
            st.log_end_offset = leo
        _rebuild_producer_state(p, [x for _, bs in segments for x in bs])
        self.parts[(p.topic, p.index)] = pf

    def restore_services(self, state, services: Services) -> None:
        """After load: the coordinators from the internal topics' records, then any
        transaction still open in a partition (no coordinator record) aborted."""
        groups, txns = services.groups, services.transactions
        if groups is not None and txns is not None:
            n_off, n_txn = replay(state, groups, txns)
            log.info("rebuilt %d committed offsets and %d transactional ids from "
                     "__consumer_offsets / __transaction_state", n_off, n_txn)
        share, share_log = services.share, services.share_state_log
        if share is not None and share_log is not None:
            n_share, skipped = replay_share_state(state, share, share_log)
            log.info("rebuilt %d share-partitions from __share_group_state", n_share)
            if skipped:
                log.warning("skipped %d unreadable __share_group_state records", skipped)
        self.abort_open_transactions(state)

    def abort_open_transactions(self, state) -> None:
        """Transactions open at the crash that no coordinator finished: end them with
        ABORT markers, as a timeout would, so the last stable offset moves."""
        for t in state.topics.values():
            for p in t.partitions:
                open_txns = [(pid, e.epoch) for pid, e in p.producers.items()
                             if e.txn_first_offset >= 0]
                for pid, epoch in open_txns:
                    if p.leader < 0:
                        continue
                    base = state.append_control(p, control_batch(False, pid, epoch,
                                                                 state.now()))
                    p.complete_txn(pid, epoch, base, False)
                    log.info("%s-%d: aborted producer %d's transaction left open at "
                             "shutdown", p.topic, p.index, pid)

    # ---- keeping in step -----------------------------------------------------------------
    def on_event(self, state, event: DomainEvent) -> None:
        if isinstance(event, Appended):
            t = state.topics.get(event.topic)
            if t is not None:
                self.sync_partition(state, t, t.partitions[event.partition])
        elif isinstance(event, LogCleaned):
            pf = self.parts.get((event.topic, event.partition))
            if pf is not None:
                pf.rewrite = True
        elif isinstance(event, TopicDeleted):
            self._drop_topic(event.topic)
            self.sync_meta(state)
        elif isinstance(event, TopicCreated):
            self.sync_meta(state)

    def sync(self, state) -> None:
        """Bring every partition's files and the metadata in step with the cluster.
        Not inside an observer: a write that fails here is told to the controller at
        once (its leadership moves before the next partition is written)."""
        channel = state.log_dir_failure_channel
        for t in list(state.topics.values()):
            for p in t.partitions:
                self.sync_partition(state, t, p)
                if channel.pending:
                    state.tell_log_dir_failures()
        try:
            self.sync_meta(state)
            self.sync_security()
        except OSError as e:
            # a full or failing data directory: the metadata is written again at the
            # next tick that can (the old file stays whole: written aside, renamed)
            if str(e) != self._meta_error:
                log.warning("data directory: cannot write metadata: %s", e)
                self._meta_error = str(e)
        else:
            self._meta_error = ""
        self._trim_heap()

    def _trim_heap(self) -> None:
        """After closed segments were mapped, hand the freed heap pages back to the OS
        (at most once a TRIM_INTERVAL_S): RssAnon then follows what is alive, not the
        highest it ever was (disk.release_freed_heap)."""
        if not self.mapped_since_trim:
            return
        now = time.monotonic()
        if now - self._last_trim < TRIM_INTERVAL_S:
            return
        self._last_trim = now
        self.mapped_since_trim = 0
        if release_freed_heap():
            self.heap_trims += 1

    def sync_partition(self, state, t, p: Partition) -> None:
        if p.leader < 0 or p.leader not in p.logs:
            return
        try:
            self._sync_partition(state, t, p)
        except OSError as e:  # a directory, a roll, a truncation, a flush, a rewrite
            self._write_failed(state, p, e)

    def _sync_partition(self, state, t, p: Partition) -> None:
        lg = p.leader_log
        key = (p.topic, p.index)
        pf = self.parts.get(key)
        if pf is None:
            d = os.path.join(self.path, f"{p.topic}-{p.index}")
            if os.path.isdir(d):
                shutil.rmtree(d)  # a deleted topic's leftovers under a reused name
            os.makedirs(d)
            pf = self.parts[key] = PartitionFiles(d)
            pf.written_end = pf.log_start_offset = lg.log_start_offset
        if pf.rewrite:
            self._rewrite(state, p, pf)
            return
        leo = lg.log_end_offset
        if leo == pf.written_end and lg.log_start_offset == pf.log_start_offset:
            return
        if leo < pf.written_end or not self._last_matches(lg, pf):
            self._truncate_to_common(lg, pf)
        wrote = False
        if lg.log_end_offset > pf.written_end:
            bases = lg.segments.bases
            for data, base, last, _epoch, _ts in lg.batches_from(pf.written_end, MAX_LONG):
                i = bisect_left(bases, base)
                pf.append(data, base, i < len(bases) and bases[i] == base)
                pf.written_end = last + 1
                wrote = True
        if wrote:
            self._maybe_flush(state, t, pf)
        self._map_closed_segments(p, pf)
        if lg.log_start_offset != pf.log_start_offset:
            pf.log_start_offset = lg.log_start_offset
            pf.delete_below(pf.log_start_offset)
            pf.save_meta()

    def _write_failed(self, state, p: Partition, e: OSError) -> None:
        """The data directory refused a write (full, failing): the leader's log dir
        fails as Kafka's does on an IOException. Reported to the cluster's log dir
        failure channel (Kafka's LogDirFailureChannel), not acted on here: this runs
        inside an observer of the append. The cluster tells the controller once the
        observers are done (emulator.cluster.ports; controller.log_dir_failed:
        KAFKA_STORAGE_ERROR for the append that caused it, leadership moves away).
        The batches not written stay unacknowledged; the next leader's sync writes
        its own log."""
        broker = p.leader
        path = replica_log_dir(state, broker, p.topic, p.index)
        why = f"{e.strerror or e} while appending to {p.topic}-{p.index} in {self.path}"
        log.warning("data directory write failed: %s", why)
        state.log_dir_failure_channel.report(LogDirFailure(broker, path, why))

    def _map_closed_segments(self, p: Partition, pf: PartitionFiles) -> None:
        """Closed segments below the high watermark are read from their files: every
        replica whose batches there are the leader's very objects swaps them for views
        of a read-only map of the file, and the bytes in memory are freed."""
        segs = pf.segments
        if len(segs) < 2 or segs[-2].mapped is not None:
            return  # the common case: every closed segment is mapped already
        for k in range(len(segs) - 1):
            seg = segs[k]
            end = segs[k + 1].base
            if seg.mapped is not None or end > p.high_watermark or not len(seg.bases):
                continue
            self._map_segment(p, seg, end)

    def _map_segment(self, p: Partition, seg: SegmentFile, end: int) -> None:
        with open(seg.path, "rb") as f:
            if os.fstat(f.fileno()).st_size < seg.size:
                return
            mm = mmap.mmap(f.fileno(), seg.size, access=mmap.ACCESS_READ)
        view = memoryview(mm)
        n = len(seg.bases)
        leader = p.leader_log
        originals = {}
        for i in range(n):
            stop = seg.positions[i + 1] if i + 1 < n else seg.size
            obj = leader.batch_at(seg.bases[i])
            if obj is not None and len(obj) == stop - seg.positions[i]:
                originals[seg.bases[i]] = (obj, view[seg.positions[i]:stop])
        for lg in p.logs.values():
            mine = [e for e in lg.batches_from(seg.base, MAX_LONG) if e[2] < end]
            if not mine or any(originals.get(e[1], (None,))[0] is not e[0] for e in mine):
                continue  # this replica holds other bytes there (or none): leave it
            lg.replace_batches(seg.base, end, [(originals[e[1]][1], e[1], e[2], e[3], e[4])
                                               for e in mine])
        seg.mapped = mm
        self.mapped_since_trim += 1

    def _last_matches(self, lg, pf: PartitionFiles) -> bool:
        seg = next((s for s in reversed(pf.segments) if len(s.bases)), None)
        if seg is None:
            return True
        base = seg.bases[-1]
        data = lg.batch_at(base)
        return data is not None and read_header(data).base_offset == base and \
            fingerprint(data) == seg.fingerprints[-1]

    def _truncate_to_common(self, lg, pf: PartitionFiles) -> None:
        """Walk back to the last batch the leader's log shares with the files."""
        for seg in reversed(pf.segments):
            for i in range(len(seg.bases) - 1, -1, -1):
                base = seg.bases[i]
                data = lg.batch_at(base)
                if data is not None and read_header(data).base_offset == base and \
                        fingerprint(data) == seg.fingerprints[i]:
                    end = read_header(data).last_offset + 1
                    pf.truncate_to(end)
                    pf.written_end = end
                    return
        pf.truncate_to(-1)
        pf.written_end = lg.log_start_offset
        if pf.segments and not len(pf.segments[0].bases):
            os.unlink(pf.segments[0].path)
            pf.segments.clear()
            pf.close()

    def _maybe_flush(self, state, t, pf: PartitionFiles) -> None:
        every = int(state.topic_config(t, "flush.messages"))
        ms = int(state.topic_config(t, "flush.ms"))
        due = pf.unflushed >= every or (time.monotonic() - pf.last_flush) * 1000 >= ms
        pf.flush(fsync=due)

    def _rewrite(self, state, p: Partition, pf: PartitionFiles) -> None:
        """A cleaned log: write its segments afresh, then swap them in by rename."""
        lg = p.leader_log
        pf.close()
        old = {s.path for s in pf.segments}
        fresh = PartitionFiles(pf.path)
        bases = lg.segments.bases
        staged = []
        for data, base, last, _epoch, _ts in lg.batches_from(lg.log_start_offset, MAX_LONG):
            i = bisect_left(bases, base)
            if not fresh.segments or (i < len(bases) and bases[i] == base):
                if fresh.fh is not None:
                    fresh.fh.flush()
                    os.fsync(fresh.fh.fileno())
                    fresh.fh.close()
                seg_base = bases[i] if i < len(bases) and bases[i] == base else base
                fresh.segments.append(SegmentFile(seg_base, os.path.join(
                    pf.path, segment_name(seg_base) + ".cleaned")))
                fresh.fh = open(fresh.segments[-1].path, "wb")
                staged.append(fresh.segments[-1])
            seg = fresh.segments[-1]
            seg.bases.append(base)
            seg.positions.append(seg.size)
            seg.fingerprints.append(fingerprint(data))
            assert fresh.fh is not None  # opened with its first segment above
            fresh.fh.write(data)
            seg.size += len(data)
            fresh.written_end = last + 1
        if fresh.fh is not None:
            fresh.fh.flush()
            os.fsync(fresh.fh.fileno())
            fresh.fh.close()
            fresh.fh = None
        for seg in staged:
            final = seg.path[: -len(".cleaned")]
            os.replace(seg.path, final)
            seg.path = final
            old.discard(final)
        for path in old:
            if os.path.exists(path):
                os.unlink(path)
        pf.segments = fresh.segments
        pf.written_end = max(fresh.written_end, lg.log_start_offset)
        pf.rewrite = False
        if pf.segments:
            pf.fh = open(pf.segments[-1].path, "ab", buffering=0)
        pf.log_start_offset = lg.log_start_offset
        pf.cleaner_checkpoint = state.cleaner.checkpoints.get((p.topic_id, p.index), 0)
        pf.save_meta()

    def _drop_topic(self, name: str) -> None:
        for key in [k for k in self.parts if k[0] == name]:
            pf = self.parts.pop(key)
            pf.close()
            shutil.rmtree(pf.path, ignore_errors=True)

    # ---- metadata ------------------------------------------------------------------------
    @staticmethod
    def _meta(state) -> dict:
        return {"format": FORMAT_VERSION, "cluster_id": state.cluster_id, "topics": {
            name: {"id": t.id.hex(), "configs": dict(t.configs), "partitions": [
                {"replicas": list(p.replicas), "leader_epoch": p.leader_epoch,
                 "partition_epoch": p.partition_epoch} for p in t.partitions]}
            for name, t in state.topics.items()}}

    def sync_meta(self, state) -> None:
        text = json.dumps(self._meta(state), sort_keys=True)
        if text != self._meta_text:
            _atomic_json(os.path.join(self.path, META), json.loads(text))
            self._meta_text = text

    # ---- ACLs and SCRAM credentials (emulator.security's stores) ---------------------
    def attach_security(self, security) -> None:
        """Load saved ACLs and SCRAM credentials into ``security`` and keep them saved.

        Users given on the command line are there first; what was saved (credentials
        changed or added through AlterUserScramCredentials) goes over them.
        """
        self.security = security
        path = os.path.join(self.path, SECURITY)
        if os.path.exists(path):
            try:
                with open(path) as f:
                    saved = json.load(f)
            except (OSError, ValueError) as e:
                raise StorageError(f"{path} is unreadable ({e})") from e
            security.credentials.users.update(
                CredentialStore.from_dict(saved.get("scram", {})).users)
            security.acls.bindings = AclStore.from_list(saved.get("acls", [])).bindings
        self._security_text = self._security_json()

    def _security_json(self) -> str:
        sec = getattr(self, "security", None)
        if sec is None:
            return ""
        return json.dumps({"scram": sec.credentials.to_dict(), "acls": sec.acls.to_list()},
                          sort_keys=True)

    def sync_security(self) -> None:
        text = self._security_json()
        if text and text != self._security_text:
            _atomic_json(os.path.join(self.path, SECURITY), json.loads(text))
            self._security_text = text

    def close(self) -> None:
        for pf in self.parts.values():
            try:
                pf.flush(fsync=True)
            except OSError as e:  # a failing disk at shutdown: say so, close the rest
                log.warning("data directory: cannot flush %s at shutdown: %s", pf.path, e)
            pf.close()


def _rebuild_producer_state(p: Partition, batches: list) -> None:
    """Kafka's ProducerStateManager rebuilt from the log: sequences, open and aborted
    transactions (loadProducersFromRecords)."""
    p.producers.clear()
    p.aborted.clear()
    for x in batches:
        h = read_header(x.data)
        if h.producer_id < 0:
            continue
        if h.is_control:
            key = decode_records(x.data)[0].key or b"\0\0\0\0"
            commit = int.from_bytes(key[2:4], "big") == 1
            p.complete_txn(h.producer_id, h.producer_epoch, x.base, commit)
        else:
            p.record_producer(h, x.base, x.last)
    p.unreplicated_markers.clear()


__all__ = ["DataDir", "StorageError"]
