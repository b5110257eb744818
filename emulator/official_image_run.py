"""The image's official start paths: ``/etc/kafka/docker/run`` (apache/kafka) and
cp-kafka's ``/etc/confluent/docker/{configure,launch}``.

``python -m emulator.official_image_run run`` reads the environment and a mounted
``/mnt/shared/config/server.properties``, lets ``emulator.official_image`` translate
them, and runs the node until SIGTERM (a node of a cluster of nodes, when its
controller quorum voters name several: emulator.official_cluster); ``configure`` writes cp-kafka's
``/etc/kafka/kafka.properties`` from the environment (scripts that Testcontainers
modules append to that step then run), ``launch`` starts from that file. A setting
the emulator cannot honour ends the process with one line naming the variable.
docs/official-images.md describes the conventions.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.fidelity import default_mode
from emulator.official_cluster import NodeCluster, Registration, cluster_of
from emulator.official_image import (
    APACHE,
    CONFLUENT,
    Listener,
    NodePlan,
    Refused,
    merged_properties,
    ready_lines,
    translate,
)
from emulator.properties import properties_text

if TYPE_CHECKING:
    from emulator.runtime import Cluster

MOUNTED_CONFIG = "/mnt/shared/config/server.properties"
CONFLUENT_PROPERTIES = "/etc/kafka/kafka.properties"
log = logging.getLogger("kafka_emulator.official_image")
# The lines Testcontainers and scripts wait for: logged whatever the root level is
# (KAFKA_LOG4J_ROOT_LOGLEVEL=WARN must not leave a waiting module hanging).
ready_log = logging.getLogger("kafka_emulator.official_image.ready")
ready_log.setLevel(logging.INFO)


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None


def _plan(flavor: str, mounted_path: str | None) -> NodePlan:
    mounted = None
    if mounted_path:
        data = _read(mounted_path)
        mounted = data.decode("utf-8", "replace") if data is not None else None
    return translate(os.environ, flavor, mounted=mounted, hostname=socket.gethostname(),
                     read_file=_read)


def _refuse(e: Refused) -> int:
    print(f"kafka-emulator: refused: {e}", file=sys.stderr, flush=True)
    return 1


def cluster_for(plan: NodePlan, tls_dir: str | None = None, control: bool = True) -> Cluster:
    """The (unstarted) cluster a plan describes; a mounted keystore's certificate and
    key are written to ``tls_dir`` (a new temporary directory by default, in the
    container's /tmp). Without a keystore the cluster generates its CA (in ``tls_dir``
    when given, else in a directory it removes when it stops). ``control`` False: no
    HTTP control plane, whatever KAFKA_EMULATOR_CONTROL_PORT says."""
    from emulator.runtime import Cluster
    from emulator.security.config import SecurityConfig

    tls_cert = tls_key = None
    if plan.tls_cert_pem is not None and plan.tls_key_pem is not None:
        tls_dir = tls_dir or tempfile.mkdtemp(prefix="kafka-emulator-tls-")
        Path(tls_dir).mkdir(parents=True, exist_ok=True)
        tls_cert, tls_key = f"{tls_dir}/broker-given.pem", f"{tls_dir}/broker-given-key.pem"
        Path(tls_cert).write_bytes(plan.tls_cert_pem)
        Path(tls_key).write_bytes(plan.tls_key_pem)
        os.chmod(tls_key, 0o600)
    client_ca = None
    if plan.tls_client_ca_pem is not None and tls_dir:
        client_ca = f"{tls_dir}/client-ca-given.pem"
        Path(client_ca).write_bytes(plan.tls_client_ca_pem)
    security = SecurityConfig(
        listeners=plan.listeners_spec, protocol_map=plan.protocol_map,
        sasl_users=plan.sasl_users, super_users=plan.super_users, authorizer=plan.authorizer,
        allow_everyone_if_no_acl_found=plan.allow_everyone_if_no_acl_found,
        tls_dir=tls_dir, tls_cert=tls_cert, tls_key=tls_key,
        tls_client_auth=plan.tls_client_auth, tls_client_ca=client_ca)
    control_port = os.environ.get("KAFKA_EMULATOR_CONTROL_PORT") if control else None
    fidelity, seed = _fidelity_from_env()
    cluster = Cluster(
        plan.brokers, host=plan.listeners[0].bind_host, first_broker_id=plan.node_id,
        advertised_listeners=plan.advertised, security=security, config=plan.config,
        control_port=int(control_port) if control_port else None,
        control_host=os.environ.get("KAFKA_EMULATOR_CONTROL_HOST", "127.0.0.1"),
        control_token=os.environ.get("KAFKA_EMULATOR_CONTROL_TOKEN"),
        seed=seed, fidelity=fidelity)
    if plan.cluster_id:
        cluster.state.cluster_id = plan.cluster_id
    return cluster


def _fidelity_from_env() -> tuple[str, int]:
    """KAFKA_EMULATOR_FIDELITY and KAFKA_EMULATOR_SEED as kafka-emulator's own path reads
    them (docs/fidelity.md); a bad value is refused in one line naming the variable."""
    try:
        mode = default_mode()
    except ValueError as e:
        raise Refused(str(e)) from None
    seed = os.environ.get("KAFKA_EMULATOR_SEED", "0").strip() or "0"
    try:
        return mode, int(seed)
    except ValueError:
        raise Refused(f"KAFKA_EMULATOR_SEED={seed!r}: not a whole number") from None


async def _serve(plan: NodePlan) -> int:
    from emulator.cli import _on_stop_signals
    from emulator.runtime import stop_serving

    nodes = cluster_of(plan, os.environ)
    if nodes is not None:
        return await _serve_node_of_cluster(plan, nodes)
    cluster = cluster_for(plan, os.environ.get("KAFKA_EMULATOR_TLS_DIR"))
    try:
        await cluster.start_async()
    except OSError as e:
        print(f"kafka-emulator: cannot listen: {e}", file=sys.stderr, flush=True)
        return 1
    stop = asyncio.Event()
    _on_stop_signals(asyncio.get_running_loop(), stop)
    for line in ready_lines(plan):
        ready_log.info("%s", line)
    served = " ".join(f"{ls.name} {ls.advertised_host}:{ls.advertised_port}"
                      for ls in plan.listeners)
    extra = f" tls-ca {cluster.tls.trust}" if cluster.tls is not None else ""
    print(f"kafka-emulator ready: node {plan.node_id} listeners {served}{extra}", flush=True)
    await stop.wait()
    await stop_serving(cluster)
    log.info("stopped")
    return 0


def state_plan(plan: NodePlan, nodes: NodeCluster) -> NodePlan:
    """The cluster the state node runs: one broker per voter, every listener of every
    broker on a free port of every interface (the nodes' fronts forward to them; each
    broker's advertised addresses come with its node's registration)."""
    return replace(plan, node_id=nodes.state_node, brokers=len(nodes.voters),
                   listeners=[replace(ls, bind_host="0.0.0.0", port=0) for ls in plan.listeners])


def isolated_state_plan(plan: NodePlan, first: Registration) -> NodePlan:
    """The cluster an isolated-mode state node (a controller) runs once the first
    broker node registers: that one broker, every listener it registered on a free port
    of every interface, the controller's configs (Kafka's controller applies the topic
    defaults); later brokers are added as they register. Internal topics keep Kafka's
    replication factor of 3 unless the configs say otherwise (the emulator's default
    for a cluster made with fewer brokers would be lower). The SASL users are the ones
    the broker registered: in Kafka's example only the brokers mount the JAAS file."""
    config = dict(plan.config)
    for key in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor"):
        config.setdefault(key, "3")
    return replace(plan, node_id=first.node_id, brokers=1, roles=("broker",), voters={},
                   config=config, sasl_users=dict(first.sasl_users),
                   listeners=[Listener(name, protocol, "0.0.0.0", 0, host, port)
                              for name, protocol, host, port in first.listeners])


async def _serve_node_of_cluster(plan: NodePlan, nodes: NodeCluster) -> int:
    """One node of a cluster of nodes (emulator.official_cluster): the state node runs
    the cluster and the link, every node its front; ready once this node's broker is
    registered."""
    from emulator.cli import _on_stop_signals
    from emulator.runtime import stop_serving
    from emulator.server.node_link import LinkServer, NodeFront, NodeHealth

    stop = asyncio.Event()
    _on_stop_signals(asyncio.get_running_loop(), stop)
    cluster: Cluster | None = None
    made: list[Cluster] = []  # isolated mode: the cluster made for the first broker
    link: LinkServer | None = None

    async def make(first: Registration) -> Cluster:
        c = cluster_for(isolated_state_plan(plan, first), control=False)
        made.append(c)
        await c.start_async()
        return c

    if nodes.holds_state and nodes.controller_only:
        link = LinkServer(None, nodes, [], make)
    elif nodes.holds_state:
        cluster = cluster_for(state_plan(plan, nodes))
        await cluster.start_async()
        for bid in nodes.broker_ids:  # each starts when its node registers
            await cluster.stop_broker_async(bid, fence_after_ms=0)
        link = LinkServer(cluster, nodes, plan.listeners)
    # A controller serves no client: its front only keeps its registration.
    front = NodeFront([] if nodes.controller_only else plan.listeners, Registration.of(plan),
                      nodes)
    health: NodeHealth | None = None
    control = os.environ.get("KAFKA_EMULATOR_CONTROL_PORT")
    if cluster is None and control:  # a combined state node's control plane answers its own
        health = NodeHealth(front)
    try:
        if link is not None:
            await link.start()
        if health is not None:
            await health.start(os.environ.get("KAFKA_EMULATOR_CONTROL_HOST", "127.0.0.1"),
                               int(control or 0))
        await front.open()
    except OSError as e:
        print(f"kafka-emulator: cannot listen: {e}", file=sys.stderr, flush=True)
        return 1
    log.info("node %d (%s) of the cluster of voters %s; its state is in node %d%s",
             plan.node_id, ",".join(nodes.roles), ",".join(map(str, sorted(nodes.voters))),
             nodes.state_node,
             " (this one)" if nodes.holds_state else
             f", reached at {nodes.link_host}:{nodes.link_port}")
    running = asyncio.ensure_future(front.run(stop))
    registered = asyncio.ensure_future(front.registered.wait())
    await asyncio.wait({running, registered}, return_when=asyncio.FIRST_COMPLETED)
    if registered.done():
        for line in ready_lines(plan):
            ready_log.info("%s", line)
        served = " ".join(f"{ls.name} {ls.advertised_host}:{ls.advertised_port}"
                          for ls in front.listeners)
        what = f"listeners {served}" if served else "a controller, no client listener"
        print(f"kafka-emulator ready: node {plan.node_id} {what} (a node of the cluster of "
              f"voters {','.join(map(str, sorted(nodes.voters)))}; state in node "
              f"{nodes.state_node})", flush=True)
    registered.cancel()
    try:
        await running  # until SIGTERM; a refusal by the state node raises Refused
    finally:
        await front.close()
        if health is not None:
            health.close()
        if link is not None:
            await link.stop()
        for c in ([cluster] if cluster is not None else []) + made:
            await stop_serving(c)
    log.info("stopped")
    return 0


def _start(plan: NodePlan) -> int:
    for note in plan.notes:
        log.info("%s", note)
    for warning in plan.warnings:
        log.warning("%s", warning)
    from emulator.runtime import event_loop_kind, new_event_loop

    # As the kafka-emulator command: the standard loop unless KAFKA_EMULATOR_EVENT_LOOP
    # asks for uvloop (emulator.runtime.new_event_loop says why).
    try:
        kind = event_loop_kind("asyncio")
    except ValueError as e:
        log.error("%s", e)
        return 2
    loop = new_event_loop(kind)
    try:
        return loop.run_until_complete(_serve(plan))
    finally:
        loop.close()


def _log_level() -> str:
    """KAFKA_EMULATOR_LOG_LEVEL, else the official images' KAFKA_LOG4J_ROOT_LOGLEVEL in
    Python's names, else INFO."""
    level = os.environ.get("KAFKA_EMULATOR_LOG_LEVEL")
    if level:
        return level
    log4j = os.environ.get("KAFKA_LOG4J_ROOT_LOGLEVEL", "").strip().upper()
    return {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING",
            "ERROR": "ERROR", "FATAL": "CRITICAL", "OFF": "CRITICAL"}.get(log4j, "INFO")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m emulator.official_image_run",
                                description="The official images' start paths.")
    p.add_argument("step", choices=["run", "configure", "launch"],
                   help="run: apache/kafka's /etc/kafka/docker/run; configure and launch: "
                   "cp-kafka's /etc/confluent/docker steps")
    p.add_argument("--flavor", choices=[APACHE, CONFLUENT], default=APACHE,
                   help="whose conventions the variables follow (default apache)")
    p.add_argument("--mounted", default=None, metavar="FILE",
                   help=f"the properties file to start from (default: {MOUNTED_CONFIG} "
                   f"for run, {CONFLUENT_PROPERTIES} for launch)")
    args = p.parse_args(argv)
    logging.basicConfig(level=_log_level(),
                        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
                        stream=sys.stdout)
    try:
        if args.step == "run":
            return _start(_plan(args.flavor, args.mounted or MOUNTED_CONFIG))
        if args.step == "configure":
            translate(os.environ, CONFLUENT, hostname=socket.gethostname(), read_file=_read)
            props, _ = merged_properties(os.environ, CONFLUENT)
            target = args.mounted or CONFLUENT_PROPERTIES
            Path(target).write_text(properties_text(props), encoding="utf-8")
            print(f"===> Configured {target} ({len(props)} properties)", flush=True)
            return 0
        return _start(_plan(CONFLUENT, args.mounted or CONFLUENT_PROPERTIES))
    except Refused as e:
        return _refuse(e)


if __name__ == "__main__":
    sys.exit(main())
