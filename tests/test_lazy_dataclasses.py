"""Dataclass methods compiled on first use (emulator.lazy_dataclasses, the command's start):
the same classes as ``dataclasses`` makes, every method deferred until used.

The same class bodies are built twice, plainly and inside ``lazy_methods()``, and must
behave alike: construction, defaults and factories, ``__post_init__``, ``repr``,
equality, hashing, ordering, frozen assignment refused, slots, inheritance, pickling,
``replace``, signatures and the generated ``__doc__``. Every dataclass of the emulator
and of wire/ is compared the same way in a fresh process, and the command's start over
TCP is the client tests' (and bench/start.py's) concern, checked here once with a real
client."""

from __future__ import annotations

import dataclasses
import inspect
import json
import pickle
import subprocess
import sys
import textwrap
import types
import typing
from pathlib import Path

import pytest

from emulator.lazy_dataclasses import LazyMethod, lazy_methods, supported

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not supported(), reason="this Python has no _create_fn")

SOURCE = textwrap.dedent('''
    from __future__ import annotations

    import dataclasses
    from dataclasses import InitVar, KW_ONLY, dataclass, field


    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()


    @dataclass(frozen=True, slots=True)
    class Point3(Point):
        """A subclass with a docstring."""
        z: int = 0


    @dataclass(order=True)
    class Version:
        major: int
        minor: int = 0
        notes: list[str] = field(default_factory=list, compare=False, repr=False)
        _: KW_ONLY
        label: str = "v"


    @dataclass
    class Derived:
        base: int
        scale: InitVar[int] = 2
        total: int = field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            self.total = self.base * scale


    @dataclass(eq=True, unsafe_hash=True)
    class Keyed:
        key: str
        self: int = 0  # a field named self: dataclasses names __init__'s own __dataclass_self__


    @dataclass(frozen=True)
    class Node:
        name: str
        children: tuple[Node, ...] = ()
''')


def build(lazy: bool) -> types.ModuleType:
    mod = types.ModuleType(f"lazy_case_{lazy}")
    sys.modules[mod.__name__] = mod  # dataclasses reads the module's globals there
    if lazy:
        with lazy_methods() as active:
            assert active
            exec(SOURCE, mod.__dict__)  # noqa: S102 - the test's own class bodies
    else:
        exec(SOURCE, mod.__dict__)  # noqa: S102
    return mod


@pytest.fixture(scope="module")
def plain() -> types.ModuleType:
    return build(False)


@pytest.fixture
def lazy() -> types.ModuleType:
    return build(True)  # afresh for each test: which methods compiled is the test's


def test_methods_are_deferred_until_used_then_plain_functions(lazy: types.ModuleType) -> None:
    Point = lazy.Point
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        assert isinstance(Point.__dict__[name], LazyMethod | types.FunctionType), name
    assert isinstance(Point.__dict__["__init__"], LazyMethod)
    assert isinstance(Point.__dict__["__eq__"], LazyMethod)
    p = Point(1, 2)
    init = Point.__dict__["__init__"]
    assert type(init) is types.FunctionType
    assert init.__qualname__ == "Point.__init__"
    assert isinstance(Point.__dict__["__eq__"], LazyMethod)  # not used yet
    assert p == Point(1, 2)
    assert type(Point.__dict__["__eq__"]) is types.FunctionType


def test_the_generated_methods_behave_as_dataclasses_own(plain: types.ModuleType,
                                                         lazy: types.ModuleType) -> None:
    for m in (plain, lazy):
        p = m.Point(1, 2, ("a",))
        assert repr(p) == "Point(x=1, y=2, tags=('a',))"
        assert p == m.Point(1, 2, ("a",)) and p != m.Point(1, 3)
        assert hash(p) == hash((1, 2, ("a",)))
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            p.x = 5
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
            del p.y
        assert not hasattr(p, "__dict__")  # slots
        assert pickle.loads(pickle.dumps(p)) == p
        assert dataclasses.replace(p, y=9) == m.Point(1, 9, ("a",))
        assert m.Point.__match_args__ == ("x", "y", "tags")
        q = m.Point3(1, 2, (), 3)  # a subclass's instance first: the base's methods too
        assert repr(q) == "Point3(x=1, y=2, tags=(), z=3)"
        assert q != p and q == m.Point3(1, 2, (), 3)
        v = m.Version(1, 2, ["x"], label="w")
        assert repr(v) == "Version(major=1, minor=2, label='w')"
        assert m.Version(1, 2) < m.Version(1, 3) <= m.Version(1, 3) and m.Version(2) > v
        assert m.Version(1, 2, ["other"], label="w") == v  # notes: compare=False
        with pytest.raises(TypeError):
            m.Version(1, 2, [], "positional label")
        assert m.Version(3).notes == [] and m.Version(3).notes is not m.Version(3).notes
        d = m.Derived(4, 3)
        assert (d.base, d.total) == (4, 12) and m.Derived(4).total == 8
        k = m.Keyed("a", 1)
        assert k.self == 1 and hash(k) == hash(m.Keyed("a", 1)) and k != m.Keyed("a", 2)
        n = m.Node("r", (m.Node("c"),))
        assert repr(n) == "Node(name='r', children=(Node(name='c', children=()),))"
        with pytest.raises(TypeError):
            m.Point()  # x is required


def test_what_introspection_sees_is_the_same(plain: types.ModuleType,
                                             lazy: types.ModuleType) -> None:
    for name in ("Point", "Point3", "Version", "Derived", "Keyed", "Node"):
        a, b = getattr(plain, name), getattr(lazy, name)
        assert b.__doc__ == a.__doc__, name  # computed from the signature when undocumented
        assert str(inspect.signature(b)) == str(inspect.signature(a)), name
        assert sorted(b.__dict__) == sorted(a.__dict__), name
        assert [f.name for f in dataclasses.fields(b)] == [f.name for f in dataclasses.fields(a)]
        for meth in ("__init__", "__repr__", "__eq__"):
            fa, fb = getattr(a, meth), getattr(b, meth)
            assert (fa.__module__, fb.__module__) == (plain.__name__, lazy.__name__)
            assert fb.__annotations__ == fa.__annotations__, (name, meth)
            assert fb.__defaults__ == fa.__defaults__, (name, meth)
    assert isinstance(lazy.Point.__dict__["__init__"], LazyMethod)  # none of that compiled


def test_the_block_restores_dataclasses() -> None:
    before = dataclasses._create_fn  # type: ignore[attr-defined]
    with lazy_methods():
        assert dataclasses._create_fn is not before  # type: ignore[attr-defined]
        assert dataclasses.inspect is not inspect  # type: ignore[attr-defined]
    assert dataclasses._create_fn is before  # type: ignore[attr-defined]
    assert dataclasses.inspect is inspect  # type: ignore[attr-defined]
    assert not hasattr(typing, "compile")

    @dataclasses.dataclass
    class After:
        a: int

    assert type(After.__dict__["__init__"]) is types.FunctionType


class Shape(typing.TypedDict):
    sides: int


def _message() -> type:
    class Message(typing.TypedDict, total=False):
        name: str
        parts: list[int]
        shape: Shape | None

    return Message


def test_a_typeddict_made_inside_resolves_as_plainly() -> None:
    """Inside the block a TypedDict's string annotations are compiled when resolved, not
    when made: the same annotations, keys and resolved hints as outside, the ForwardRefs
    equal (and hashing alike) to the plain ones."""
    plain = _message()
    with lazy_methods():
        lazy = _message()
    assert lazy.__annotations__ == plain.__annotations__
    assert [hash(v) for v in lazy.__annotations__.values()] == [
        hash(v) for v in plain.__annotations__.values()]
    assert (lazy.__required_keys__, lazy.__optional_keys__) == (
        plain.__required_keys__, plain.__optional_keys__)
    assert typing.get_type_hints(lazy) == typing.get_type_hints(plain) == {
        "name": str, "parts": list[int], "shape": Shape | None}


# Every dataclass of the emulator and wire/, described; run once plainly and once with the
# methods deferred, in fresh processes (the classes are made at import).
DESCRIBE = """
import dataclasses, importlib, inspect, json, pkgutil, sys, typing
lazy = sys.argv[1] == "lazy"
from emulator.lazy_dataclasses import lazy_methods
import emulator, wire
skip = ("emulator.__main__", "emulator.pytest_plugin")
def walk():
    for pkg in (emulator, wire):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if not info.name.startswith(skip):
                yield info.name
with lazy_methods() if lazy else open("/dev/null"):
    names = list(walk())
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an optional extra this environment lacks: the same in both runs
def hints(cls):
    try:
        return repr(typing.get_type_hints(cls))
    except Exception as e:  # a name only TYPE_CHECKING imports: the same in both runs
        return type(e).__name__
out = {}
for mod in list(sys.modules.values()):
    for cls in list(vars(mod).values()) if mod and mod.__name__.startswith(("emulator", "wire")) else ():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == mod.__name__:
            out[f"{cls.__module__}.{cls.__qualname__}"] = [
                cls.__doc__, str(inspect.signature(cls)), sorted(cls.__dict__),
                getattr(cls, "__match_args__", None), repr(cls.__dataclass_params__)]
        elif typing.is_typeddict(cls) and cls.__module__ == mod.__name__:
            out[f"typeddict {cls.__module__}.{cls.__qualname__}"] = [
                repr(cls.__annotations__), sorted(cls.__required_keys__),
                sorted(cls.__optional_keys__), hints(cls)]
print(json.dumps(out))
"""


def describe(mode: str) -> dict[str, list]:
    r = subprocess.run([sys.executable, "-c", DESCRIBE, mode], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_every_dataclass_of_the_emulator_is_described_alike() -> None:
    plain, lazy = describe("plain"), describe("lazy")
    assert len(plain) > 150  # the walk did import the domain
    # and its message TypedDicts (string annotations: typing's ForwardRefs)
    assert sum(k.startswith("typeddict ") for k in plain) > 40
    assert lazy.keys() == plain.keys()
    differ = {k: (plain[k], lazy[k]) for k in plain if plain[k] != lazy[k]}
    assert differ == {}


def test_the_command_serves_a_client_with_its_methods_deferred() -> None:
    """``kafka-emulator`` as a process: a produce, a group's consume and commit and a
    transaction over TCP, each making and comparing the dataclasses the start deferred."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from emulator_process import emulator_process
    finally:
        sys.path.remove(str(ROOT / "bench"))
    with emulator_process("--brokers", "3") as (_proc, brokers):
        bootstrap = ",".join(f"{h}:{p}" for h, p in brokers)
        p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                      "transactional.id": "lazy-tx"})
        p.init_transactions(30)
        p.begin_transaction()
        for i in range(5):
            p.produce("lazy-topic", f"v{i}".encode(), key=b"k")
        p.commit_transaction(30)
        c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "lazy-g",
                                      "auto.offset.reset": "earliest",
                                      "enable.auto.commit": False,
                                      "isolation.level": "read_committed"})
        c.subscribe(["lazy-topic"])
        got: list[bytes] = []
        try:
            for _ in range(300):
                m = c.poll(0.1)
                if m is not None and m.error() is None:
                    got.append(m.value())
                    if len(got) == 5:
                        c.commit(m, asynchronous=False)
                        break
            committed = c.committed([confluent_kafka.TopicPartition("lazy-topic", 0)], 10)
        finally:
            c.close()
        assert got == [f"v{i}".encode() for i in range(5)]
        assert committed[0].offset == 5  # past the fifth record (the marker follows it)


# The command started as a user starts it, up to its ready line: how many of the generated
# methods of the emulator's and wire's dataclasses are still waiting, and how many ran.
AT_READY = """
import json, os, sys
from emulator import cli
from emulator.lazy_dataclasses import LazyMethod
class Ready:
    def write(self, text):
        if "kafka-emulator ready" in text:
            waiting = compiled = 0
            for name, mod in list(sys.modules.items()):
                if mod is None or not name.startswith(("emulator.", "wire.")):
                    continue
                for cls in list(vars(mod).values()):
                    if isinstance(cls, type) and "__dataclass_fields__" in vars(cls) \\
                            and cls.__module__ == name:
                        for meth in ("__init__", "__repr__", "__eq__", "__hash__"):
                            fn = vars(cls).get(meth)
                            fn = vars(fn).get("__wrapped__", fn) if callable(fn) else fn
                            if isinstance(fn, LazyMethod) and fn._real is None:
                                waiting += 1
                            elif getattr(getattr(fn, "__code__", None), "co_filename",
                                         "") == "<string>":  # dataclasses' own text
                                compiled += 1
            sys.__stdout__.write(json.dumps([waiting, compiled]) + "\\n")
            sys.__stdout__.flush()
            os._exit(0)
    def flush(self):
        pass
sys.stdout = Ready()
cli.main(["--port", "0"])
"""


def test_the_command_starts_with_most_methods_waiting() -> None:
    """``kafka-emulator`` defers them (cli.main): at its ready line most are uncompiled.
    Without lazy_methods() in cli.main every one of them is compiled at import."""
    r = subprocess.run([sys.executable, "-c", AT_READY], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    waiting, compiled = json.loads(r.stdout.splitlines()[-1])
    assert waiting > 300 and compiled < waiting / 10, (waiting, compiled)
