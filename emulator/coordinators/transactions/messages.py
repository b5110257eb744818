"""The transaction coordinator's administrative answers, typed: DescribeTransactions'
and ListTransactions' transactions.

As emulator/coordinators/groups/messages.py does for groups: exactly the fields the
coordinator writes, so that mypy checks each one; tests/test_coordinator_messages.py
holds every shape here to the wire's declaration.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class TxnTopic(TypedDict):
    topic: str
    partitions: list[int]


class DescribedTransaction(TypedDict):
    """One transaction of DescribeTransactions' answer (an error: its id and code only)."""

    transactional_id: str
    error_code: int
    transaction_state: NotRequired[str]
    transaction_timeout_ms: NotRequired[int]
    transaction_start_time_ms: NotRequired[int]
    producer_id: NotRequired[int]
    producer_epoch: NotRequired[int]
    topics: NotRequired[list[TxnTopic]]


class ListedTransaction(TypedDict):
    transactional_id: str
    producer_id: int
    transaction_state: str


__all__ = ["DescribedTransaction", "ListedTransaction", "TxnTopic"]
