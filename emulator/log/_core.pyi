"""Type stub of the compiled log and ISR core (emulator/log/_core.pyx).

The API is that of the pure twins, emulator/log/pure.py and emulator/log/isr.py.
"""

from collections.abc import Mapping, Sequence

from emulator.log.segments import Segments
from wire.records import BatchHeader

UNDEFINED_EPOCH: int
CORE_API: int
CRC32C_HARDWARE: bool

def crc32c(data: bytes | bytearray | memoryview) -> int: ...
def crc32c_portable(data: bytes | bytearray | memoryview) -> int: ...
def validate_batch(data: bytes | bytearray | memoryview) -> BatchHeader: ...

class Log:
    log_start_offset: int
    log_end_offset: int
    max_timestamp: int
    max_timestamp_offset: int
    segments: Segments

    def __init__(self, start_offset: int = 0) -> None: ...
    def maybe_roll(
        self, incoming: int, segment_bytes: int, segment_ms: int, now_ms: int
    ) -> bool: ...
    def roll(self, now_ms: int = -1) -> bool: ...
    def segment_ranges(self) -> list[tuple[int, int]]: ...
    def replace_batches(
        self, start: int, end: int, batches: list[tuple[bytes | memoryview, int, int, int, int]]
    ) -> None: ...
    def append_as_leader(
        self, data: bytes | bytearray | memoryview, leader_epoch: int, append_time: int = -1,
        crc_checked: bool = False,
    ) -> tuple[int, int, int]: ...
    def append_as_follower(
        self, data: bytes | memoryview, base: int, last: int, epoch: int, max_ts: int
    ) -> None: ...
    def read(
        self, offset: int, max_bytes: int, max_offset: int, min_one: bool = True
    ) -> list[bytes | memoryview]: ...
    def read_bytes(
        self, offset: int, max_bytes: int, max_offset: int, min_one: bool = True
    ) -> bytes: ...
    def batches_from(
        self, offset: int, max_bytes: int
    ) -> list[tuple[bytes | memoryview, int, int, int, int]]: ...
    def bytes_between(self, start: int, end: int) -> int: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def batch_count(self) -> int: ...
    def offset_for_timestamp(self, ts: int) -> tuple[int, int] | None: ...
    def batch_at(self, offset: int) -> bytes | memoryview | None: ...
    def max_timestamp_batch(self) -> bytes | memoryview | None: ...
    @property
    def latest_epoch(self) -> int: ...
    def epoch_entries(self) -> list[tuple[int, int]]: ...
    def assign_epoch(self, epoch: int, start_offset: int) -> None: ...
    def truncate_to(self, offset: int) -> None: ...
    def truncate_fully_and_start_at(self, offset: int) -> None: ...
    def delete_before(self, offset: int) -> int: ...
    def apply_retention(
        self, now_ms: int, retention_ms: int, retention_bytes: int, max_offset: int
    ) -> int: ...

class FollowerState:
    log_end_offset: int
    last_caught_up_ms: int
    last_fetch_leader_leo: int
    last_fetch_ms: int

    def __init__(
        self,
        log_end_offset: int = 0,
        last_caught_up_ms: int = 0,
        last_fetch_leader_leo: int = 0,
        last_fetch_ms: int = 0,
    ) -> None: ...

def update_fetch_state(
    st: FollowerState, fetch_offset: int, leader_leo: int, now_ms: int
) -> None: ...
def isr_high_watermark(
    leader: int, leader_leo: int, isr: Sequence[int], followers: Mapping[int, FollowerState]
) -> int: ...
def can_join_isr(
    broker_id: int,
    st: FollowerState | None,
    isr: Sequence[int],
    replicas: Sequence[int],
    high_watermark: int,
    epoch_start: int,
) -> bool: ...
def out_of_sync_replicas(
    leader: int,
    isr: Sequence[int],
    followers: Mapping[int, FollowerState],
    now_ms: int,
    lag_max_ms: int,
) -> list[int]: ...
def scan_records(
    buf: bytes | bytearray | memoryview,
    count: int,
    base_timestamp: int,
    ts_low: int,
    ts_high: int,
    check_timestamps: bool,
    need_key: bool,
    check_offsets: bool,
    offset: int = 0,
) -> tuple[int, list[tuple[int, int, int]]]: ...
