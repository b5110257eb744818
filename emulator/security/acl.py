"""ACLs and Kafka's authorizer semantics (StandardAuthorizer), as pure data and functions.

Rules (Kafka's, in the order Kafka applies them):
1. a super user (``super.users``) may do anything;
2. a DENY binding matching the principal (or ``User:*``), the host (or ``*``) and the
   operation (or ALL) wins over everything else;
3. an ALLOW binding for the operation, ALL, or an operation that implies it (DESCRIBE
   is implied by READ, WRITE, DELETE and ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS) allows;
4. otherwise: ``allow.everyone.if.no.acl.found`` when no binding at all names the
   resource, else deny.
A binding names a resource literally (exact name, or ``*`` for every name) or by
prefix (PREFIXED). Codes are Kafka's (org.apache.kafka.common.acl / resource).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import IntEnum


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class PermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


Op = AclOperation
RT = ResourceType
WILDCARD = "*"
CLUSTER_NAME = "kafka-cluster"  # Kafka's one CLUSTER resource
ANONYMOUS = "User:ANONYMOUS"
WILDCARD_PRINCIPAL = "User:*"

# What each resource type supports (Kafka's AclEntry.supportedOperations): the set
# reported as authorized operations when there is no authorizer at all.
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    RT.TOPIC: frozenset({Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER,
                         Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}),
    RT.GROUP: frozenset({Op.READ, Op.DESCRIBE, Op.DELETE}),
    RT.CLUSTER: frozenset({Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS,
                           Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE}),
    RT.TRANSACTIONAL_ID: frozenset({Op.DESCRIBE, Op.WRITE, Op.TWO_PHASE_COMMIT}),
    RT.DELEGATION_TOKEN: frozenset({Op.DESCRIBE}),
    RT.USER: frozenset({Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS}),
}

# An ALLOW on any of these operations also allows the key.
_IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    Op.DESCRIBE: frozenset({Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER}),
    Op.DESCRIBE_CONFIGS: frozenset({Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}),
}


@dataclass(frozen=True)
class AclBinding:
    """One ACL: a resource pattern plus an access control entry (Kafka's AclBinding)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: PermissionType

    def to_dict(self) -> dict:
        return {k: int(v) if isinstance(v, IntEnum) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> AclBinding:
        return cls(RT(d["resource_type"]), d["resource_name"], PatternType(d["pattern_type"]),
                   d["principal"], d["host"], Op(d["operation"]),
                   PermissionType(d["permission_type"]))


@dataclass(frozen=True)
class AclFilter:
    """A filter as DescribeAcls/DeleteAcls send it: None matches anything; ANY too."""

    resource_type: ResourceType = RT.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = Op.ANY
    permission_type: PermissionType = PermissionType.ANY

    def matches(self, b: AclBinding) -> bool:
        if self.resource_type != RT.ANY and self.resource_type != b.resource_type:
            return False
        if not self._pattern_matches(b):
            return False
        if self.principal is not None and self.principal != b.principal:
            return False
        if self.host is not None and self.host != b.host:
            return False
        if self.operation != Op.ANY and self.operation != b.operation:
            return False
        return self.permission_type in (PermissionType.ANY, b.permission_type)

    def _pattern_matches(self, b: AclBinding) -> bool:
        pt, name = self.pattern_type, self.resource_name
        if pt == PatternType.MATCH:
            # Every binding that would apply to a resource of this name.
            if name is None:
                return True
            if b.pattern_type == PatternType.LITERAL:
                return b.resource_name in (name, WILDCARD)
            return b.pattern_type == PatternType.PREFIXED and name.startswith(b.resource_name)
        if pt not in (PatternType.ANY, b.pattern_type):
            return False
        return name is None or name == b.resource_name


def filter_error(f: AclFilter) -> str | None:
    """Why Kafka's controller refuses this DeleteAcls filter (INVALID_REQUEST), or None:
    a code Kafka does not know (AclControlManager.validateFilter; code 0 itself never gets
    this far, the request's parsing refuses it). DescribeAcls takes such a filter and
    finds nothing."""
    if f.resource_type == RT.UNKNOWN or f.pattern_type == PatternType.UNKNOWN:
        return "Unknown patternFilter."
    if f.operation == Op.UNKNOWN or f.permission_type == PermissionType.UNKNOWN:
        return "Unknown entryFilter."
    return None


def names_a_filter(b: AclBinding) -> bool:
    """Does this creation name ANY (or the MATCH pattern), which only a filter may?
    Kafka's AclBinding cannot hold one: building it throws, and the broker fails the
    whole CreateAcls request (UNKNOWN_SERVER_ERROR, no message) before any check below."""
    return (b.resource_type == RT.ANY or b.operation == Op.ANY
            or b.pattern_type in (PatternType.ANY, PatternType.MATCH)
            or b.permission_type == PermissionType.ANY)


def binding_error(b: AclBinding) -> str | None:
    """Why Kafka refuses to create this binding (INVALID_REQUEST), or None: the broker's
    checks first (AclApis: the CLUSTER resource's name, whatever its pattern type; an
    empty name), then the controller's (AclControlManager: a code Kafka does not know,
    read as UNKNOWN; a principal without its type)."""
    if b.resource_type == RT.CLUSTER and b.resource_name != CLUSTER_NAME:
        return "The only valid name for the CLUSTER resource is kafka-cluster"
    if not b.resource_name:
        return "Invalid empty resource name"
    if b.resource_type == RT.UNKNOWN:
        return "Invalid resourceType UNKNOWN"
    if b.pattern_type == PatternType.UNKNOWN:
        return "Invalid patternType UNKNOWN"
    if b.operation == Op.UNKNOWN:
        return "Invalid operation UNKNOWN"
    if b.permission_type == PermissionType.UNKNOWN:
        return "Invalid permissionType UNKNOWN"
    if ":" not in b.principal:
        return f"Could not parse principal from `{b.principal}` (no colon is present " \
               "separating the principal type from the principal name)"
    return None


class AclStore:
    """Every ACL binding of the cluster, in creation order (plain data, serializable).

    Bindings are kept in an insertion-ordered dict (a set that remembers order), so adding
    one is O(1), and indexed by resource type and name for the authorizer, so a check
    costs what the bindings that could apply cost, not every binding of the cluster:
    Kafka allows 10,000 bindings per request, and a scan per check or per addition made
    two such requests take seconds (StandardAuthorizer keeps a sorted index too).
    """

    def __init__(self, bindings: list[AclBinding] | tuple[AclBinding, ...] = ()) -> None:
        self._bindings: dict[AclBinding, None] = dict.fromkeys(bindings)
        # resource type -> (literal name -> bindings, prefix -> bindings, every binding)
        self._index: dict[ResourceType, tuple[dict[str, list[AclBinding]],
                                               dict[str, list[AclBinding]],
                                               list[AclBinding]]] | None = None

    @property
    def bindings(self) -> list[AclBinding]:
        """A copy, in creation order (change the store through add/delete/replace)."""
        return list(self._bindings)

    @bindings.setter
    def bindings(self, items: list[AclBinding]) -> None:
        self.replace(items)

    def replace(self, items: list[AclBinding] | tuple[AclBinding, ...]) -> None:
        self._bindings = dict.fromkeys(items)
        self._index = None

    def clear(self) -> None:
        self.replace(())

    def __len__(self) -> int:
        return len(self._bindings)

    def add(self, b: AclBinding) -> None:
        if b in self._bindings:
            return
        self._bindings[b] = None
        if self._index is not None:
            self._index_one(self._index, b)

    def describe(self, f: AclFilter) -> list[AclBinding]:
        return [b for b in self._bindings if f.matches(b)]

    def delete(self, f: AclFilter) -> list[AclBinding]:
        gone = self.describe(f)
        for b in gone:
            del self._bindings[b]
        if gone:
            self._index = None
        return gone

    def applying(self, rtype: ResourceType, name: str) -> list[AclBinding]:
        """The bindings that apply to this resource: literal ``name`` or ``*``, and every
        prefix of ``name`` that a PREFIXED binding names."""
        index = self._index
        if index is None:
            index = self._index = {}
            for b in self._bindings:
                self._index_one(index, b)
        entry = index.get(rtype)
        if entry is None:
            return []
        literal, prefixed, _ = entry
        out = list(literal.get(name, ()))
        if name != WILDCARD:
            out += literal.get(WILDCARD, ())
        if prefixed:
            for k in range(len(name) + 1):
                out += prefixed.get(name[:k], ())
        return out

    def of_type(self, rtype: ResourceType) -> list[AclBinding]:
        self.applying(rtype, "")  # builds the index
        assert self._index is not None
        entry = self._index.get(rtype)
        return entry[2] if entry else []

    @staticmethod
    def _index_one(index: dict, b: AclBinding) -> None:
        literal, prefixed, every = index.setdefault(b.resource_type, ({}, {}, []))
        if b.pattern_type == PatternType.LITERAL:
            literal.setdefault(b.resource_name, []).append(b)
        elif b.pattern_type == PatternType.PREFIXED:
            prefixed.setdefault(b.resource_name, []).append(b)
        every.append(b)

    def to_list(self) -> list[dict]:
        return [b.to_dict() for b in self._bindings]

    @classmethod
    def from_list(cls, items: list[dict]) -> AclStore:
        return cls([AclBinding.from_dict(d) for d in items])


def applies(b: AclBinding, rtype: ResourceType, name: str) -> bool:
    """Does binding ``b`` apply to this resource? The definition that
    ``AclStore.applying``'s index must agree with (tests/test_security.py checks it)."""
    if b.resource_type != rtype:
        return False
    if b.pattern_type == PatternType.LITERAL:
        return b.resource_name == name or b.resource_name == WILDCARD
    return b.pattern_type == PatternType.PREFIXED and name.startswith(b.resource_name)


@dataclass
class Authorizer:
    """Kafka's StandardAuthorizer over an AclStore: ``authorize`` is a pure decision."""

    store: AclStore = field(default_factory=AclStore)
    super_users: set[str] = field(default_factory=set)
    allow_everyone_if_no_acl_found: bool = False

    def authorize(self, principal: str, host: str, op: AclOperation, rtype: ResourceType,
                  name: str) -> bool:
        if principal in self.super_users:
            return True
        matching = self.store.applying(rtype, name)
        if not matching:
            return self.allow_everyone_if_no_acl_found
        mine = [b for b in matching
                if b.principal in (principal, WILDCARD_PRINCIPAL) and b.host in (host, WILDCARD)]
        for b in mine:
            if b.permission_type == PermissionType.DENY and b.operation in (op, Op.ALL):
                return False
        allowed = _IMPLIED_BY.get(op, frozenset({op})) | {Op.ALL}
        return any(b.permission_type == PermissionType.ALLOW and b.operation in allowed
                   for b in mine)

    def authorize_any(self, principal: str, host: str, op: AclOperation,
                      rtype: ResourceType) -> bool:
        """Kafka's authorizeByResourceType: may the principal do ``op`` on SOME resource of
        this type? (InitProducerId without a transactional id: WRITE on any topic.)

        Kafka's default Authorizer.authorizeByResourceType: allowed if ``op`` is allowed
        on a resource named "hardcode" (a super user, a wildcard or matching prefix
        ALLOW, allow.everyone.if.no.acl.found); denied by a DENY on the wildcard name;
        allowed by an ALLOW on the wildcard name; else allowed by any other ALLOW that
        no DENY dominates: a literal DENY of the same name (for a literal ALLOW), or a
        PREFIXED DENY naming a prefix of the allowed name."""
        if self.authorize(principal, host, op, rtype, "hardcode"):
            return True
        ops = {op, Op.ALL}
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allows: list[AclBinding] = []
        wildcard_allow = False
        for b in self.store.of_type(rtype):
            if b.principal not in (principal, WILDCARD_PRINCIPAL) \
                    or b.host not in (host, WILDCARD) or b.operation not in ops:
                continue
            literal = b.pattern_type == PatternType.LITERAL
            if b.permission_type == PermissionType.DENY:
                if literal and b.resource_name == WILDCARD:
                    return False
                if literal:
                    deny_literal.add(b.resource_name)
                elif b.pattern_type == PatternType.PREFIXED:
                    deny_prefixed.add(b.resource_name)
            elif b.permission_type == PermissionType.ALLOW:
                if literal and b.resource_name == WILDCARD:
                    wildcard_allow = True
                elif b.pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
                    allows.append(b)
        if wildcard_allow:
            return True
        for b in allows:
            name = b.resource_name
            if b.pattern_type == PatternType.LITERAL and name in deny_literal:
                continue
            if not any(name[:k] in deny_prefixed for k in range(1, len(name) + 1)):
                return True
        return False

    def authorized_operations(self, principal: str, host: str, rtype: ResourceType,
                              name: str) -> int:
        """Kafka's 32-bit field of the operations allowed on this resource."""
        ops = [o for o in SUPPORTED_OPERATIONS[rtype]
               if self.authorize(principal, host, o, rtype, name)]
        return to_bit_field(ops)


def to_bit_field(ops: object) -> int:
    out = 0
    for o in ops:  # type: ignore[attr-defined]
        out |= 1 << int(o)
    return out


def all_operations(rtype: ResourceType) -> int:
    """What Kafka reports with no authorizer: every operation the resource supports."""
    return to_bit_field(SUPPORTED_OPERATIONS[rtype])
