#!/usr/bin/python3
"""An example detector written in Python against crucible's bus schema.

It joins a running hub as a worker (ZeroMQ DEALER, routing id = its name),
registers as a Detector serving job kind "detect:NAME", and answers each
DetectRequest with a Verdict, speaking the worker protocol of docs/bus.md:
Register, Credit after Registered, Heartbeat every heartbeat_ms, JobResult
resent until the hub's JobResultAck, register again on Reject UnknownPeer or
when the hub falls silent. Messages are the FlatBuffers classes that flatc
--python generates from messages/*.fbs (build/generated/python), read with
Debian's python3-flatbuffers; the socket is python3-zmq.

Its method is deliberately simple, to be replaced by a real one:
  - hack   when the measured speedup is above --max-speedup (implausible),
  - unsure when the code defines no ModelNew,
  - clean  otherwise.

  tools/detectors/example_detector.py --connect tcp://127.0.0.1:5555 \
      --name plausibility [--required] [--deadline-ms 30000] [--schema DIR]

Stop it with SIGINT or SIGTERM; the hub notices it left (heartbeats stop)
and re-queues a job it held. Start it again under the same name to rejoin.
"""

import argparse
import importlib
import os
import re
import signal
import socket
import sys
import time
import types

import flatbuffers
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))


def load_schema(schema_dir):
    """Imports the generated modules from schema_dir into the global msg."""
    sys.path.insert(0, schema_dir)
    global msg
    msg = types.SimpleNamespace()
    for table in ("Candidate", "Credit", "DetectRequest", "Envelope", "Heartbeat", "Job", "JobResult", "JobResultAck",
                  "Measurement", "Payload", "Register", "Registered", "Reject", "Verdict"):
        setattr(msg, table, importlib.import_module("crucible.msg." + table))
    for enum in ("EvalStatus", "JobStatus", "RejectCode", "Role", "VerdictKind"):
        setattr(msg, enum, getattr(importlib.import_module("crucible.msg." + enum), enum))


msg = None
FILE_IDENTIFIER = b"CRCB"


def table(builder, module, **fields):
    """Builds one table of a generated module: Start, AddNAME(value) for each field, End."""
    module.Start(builder)
    for name, value in fields.items():
        getattr(module, "Add" + name)(builder, value)
    return module.End(builder)


def envelope(builder, payload_type, payload, sender, ident=""):
    """Finishes builder with an Envelope around payload (an offset)."""
    sender_off = builder.CreateString(sender)
    id_off = builder.CreateString(ident)
    root = table(builder, msg.Envelope, PayloadType=payload_type, Payload=payload, Id=id_off, Sender=sender_off,
                 SentNs=time.time_ns())
    builder.Finish(root, file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def string_vector(builder, start_vector, items):
    offsets = [builder.CreateString(x) for x in items]
    start_vector(builder, len(offsets))
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return builder.EndVector()


def byte_vector(table, field_offset):
    """The bytes of a [ubyte] field (vtable offset field_offset) without numpy."""
    o = flatbuffers.number_types.UOffsetTFlags.py_type(table._tab.Offset(field_offset))
    if o == 0:
        return b""
    start = table._tab.Vector(o)
    return bytes(table._tab.Bytes[start:start + table._tab.VectorLen(o)])


def text(value):
    return value.decode("utf-8", "replace") if value is not None else ""


def open_envelope(data):
    """The Envelope in data, or None for a buffer that is not one."""
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        return None
    try:
        return msg.Envelope.Envelope.GetRootAs(bytearray(data), 0)
    except Exception:  # a malformed buffer: dropped, like the C++ verifier does
        return None


BATCH_HEADER = b"\0\0\0\0CRBT"


def split_batch(data):
    """The messages of one frame: a batch's (docs/bus.md "Messages and
    verification"), or the frame itself. A truncated batch gives [data], for
    open_envelope to refuse.

    >>> frame = BATCH_HEADER + bytes([3, 0, 0, 0, 0, 0, 0, 0]) + b"abc" + bytes(5) + bytes(8)
    >>> split_batch(frame)
    [b'abc', b'']
    >>> split_batch(b"plain")
    [b'plain']
    >>> split_batch(BATCH_HEADER + bytes([9, 0, 0, 0, 0, 0, 0, 0]) + b"short")[0][:8] == BATCH_HEADER
    True
    """
    if not data.startswith(BATCH_HEADER):
        return [data]
    out, at = [], len(BATCH_HEADER)
    while at < len(data):
        if len(data) - at < 8:
            return [data]
        n = int.from_bytes(data[at:at + 4], "little")
        at += 8
        if n > len(data) - at:
            return [data]
        out.append(data[at:at + n])
        at += (n + 7) & ~7
    return out


def payload_as(env, cls):
    table = env.Payload()
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    return obj


class PlausibilityCheck:
    """The detection method: replace examine() with a real one."""

    def __init__(self, max_speedup):
        self.max_speedup = max_speedup

    def examine(self, request):
        """(kind, reason, confidence) for a DetectRequest."""
        candidate = request.Candidate()
        measurement = request.Measurement()
        code = text(candidate.Code()) if candidate is not None else ""
        if measurement is not None and measurement.Status() == msg.EvalStatus.Ok:
            speedup = measurement.SpeedupRaw()
            if speedup > self.max_speedup:
                return (msg.VerdictKind.Hack,
                        "speedup %.2f is above %.2f, implausible for a real kernel" % (speedup, self.max_speedup), 0.8)
        if not re.search(r"\bclass\s+ModelNew\b", code):
            return msg.VerdictKind.Unsure, "the code defines no ModelNew", 0.5
        return msg.VerdictKind.Clean, "plausible speedup", 0.6


class Worker:
    """The worker side of the bus protocol (docs/bus.md), one job at a time."""

    def __init__(self, args, method):
        self.args = args
        self.method = method
        self.name = args.name
        self.kind = "detect:" + self.name
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.ROUTING_ID, self.name.encode())
        self.socket.setsockopt(zmq.LINGER, 0)
        if args.keys:
            secure(self.socket, args.keys)
        self.socket.connect(args.connect)
        self.registered = False
        self.heartbeat_s = 0.5
        self.dead_after_s = 3.0
        self.retry_s = 1.0
        self.last_seq = 0
        self.heartbeat_seq = 0
        self.unacked = {}  # job id -> [envelope bytes, last sent]
        self.recently_acked = []
        self.last_heard = time.monotonic()
        self.last_heartbeat = 0.0
        self.last_register = 0.0
        self.stopping = False

    def send(self, data):
        try:
            self.socket.send(data, zmq.DONTWAIT)
        except zmq.Again:
            pass  # the hub is not there yet; heartbeats and resends heal it

    def register(self):
        b = flatbuffers.Builder(256)
        name = b.CreateString(self.name)
        node = b.CreateString(socket.gethostname())
        kinds = string_vector(b, msg.Register.StartJobKindsVector, [self.kind])
        held = string_vector(b, msg.Register.StartHeldJobsVector, list(self.unacked))
        reg = table(b, msg.Register, Role=msg.Role.Detector, Name=name, Node=node, Pid=os.getpid(), JobKinds=kinds,
                    Slots=1, HeldJobs=held, LastSeq=self.last_seq, Required=self.args.required,
                    DeadlineMs=self.args.deadline_ms)
        self.send(envelope(b, msg.Payload.Payload.Register, reg, self.name, self.name))
        self.last_register = time.monotonic()

    def credit(self):
        b = flatbuffers.Builder(64)
        credit = table(b, msg.Credit, FreeSlots=1, LastSeq=self.last_seq)
        self.send(envelope(b, msg.Payload.Payload.Credit, credit, self.name))

    def heartbeat(self):
        b = flatbuffers.Builder(128)
        held = string_vector(b, msg.Heartbeat.StartHeldJobsVector, list(self.unacked))
        self.heartbeat_seq += 1
        beat = table(b, msg.Heartbeat, Seq=self.heartbeat_seq, FreeSlots=1, LastSeq=self.last_seq, HeldJobs=held)
        self.send(envelope(b, msg.Payload.Payload.Heartbeat, beat, self.name))

    def verdict_bytes(self, request):
        candidate = request.Candidate()
        candidate_id = text(candidate.CandidateId()) if candidate is not None else ""
        kind, reason, confidence = self.method.examine(request)
        b = flatbuffers.Builder(256)
        cid, det, why = b.CreateString(candidate_id), b.CreateString(self.name), b.CreateString(reason)
        verdict = table(b, msg.Verdict, CandidateId=cid, Detector=det, Verdict=kind, Reason=why,
                        Required=self.args.required, Confidence=confidence)
        print("%s: candidate %s: verdict %d (%s)" % (self.name, candidate_id, kind, reason), flush=True)
        return envelope(b, msg.Payload.Payload.Verdict, verdict, self.name, candidate_id)

    def run_job(self, job):
        job_id = text(job.JobId())
        status, payload, error = msg.JobStatus.Ok, b"", ""
        request_env = open_envelope(byte_vector(job, 8))  # Job.payload is field 2: vtable offset 8
        if text(job.Kind()) != self.kind:
            status, error = msg.JobStatus.Failed, "%s does not serve jobs of kind '%s'" % (self.name, text(job.Kind()))
        elif request_env is None or request_env.PayloadType() != msg.Payload.Payload.DetectRequest:
            status, error = msg.JobStatus.Failed, self.kind + " needs a DetectRequest payload"
        else:
            try:
                payload = self.verdict_bytes(payload_as(request_env, msg.DetectRequest.DetectRequest))
            except Exception as e:  # a bad request fails its job, never the detector
                status, error = msg.JobStatus.Failed, "%s: %s" % (type(e).__name__, e)
        b = flatbuffers.Builder(256 + len(payload))
        jid, err, worker = b.CreateString(job_id), b.CreateString(error), b.CreateString(self.name)
        data = b.CreateByteVector(payload)
        done = table(b, msg.JobResult, JobId=jid, Status=status, Payload=data, Error=err, Worker=worker, FreeSlots=1,
                     LastSeq=self.last_seq, Attempt=job.Attempt())
        result = envelope(b, msg.Payload.Payload.JobResult, done, self.name, job_id)
        self.unacked[job_id] = [result, time.monotonic()]
        self.send(result)

    def on_message(self, data):
        env = open_envelope(data)
        if env is None:
            print("%s: dropped a malformed message from the hub" % self.name, file=sys.stderr, flush=True)
            return
        self.last_heard = time.monotonic()
        kind = env.PayloadType()
        P = msg.Payload.Payload
        if kind == P.Registered:
            r = payload_as(env, msg.Registered.Registered)
            if r.HeartbeatMs():
                self.heartbeat_s = r.HeartbeatMs() / 1000.0
            if r.DeadAfterMs():
                self.dead_after_s = r.DeadAfterMs() / 1000.0
            if not self.registered:
                print("%s: registered with hub (session %d)" % (self.name, r.HubSession()), flush=True)
            self.registered = True
            self.credit()
        elif kind == P.Reject:
            r = payload_as(env, msg.Reject.Reject)
            if r.Code() == msg.RejectCode.UnknownPeer:
                self.registered = False
                self.register()
            else:
                print("%s: hub refused a message: %s" % (self.name, text(r.Reason())), file=sys.stderr, flush=True)
        elif kind == P.Job:
            job = payload_as(env, msg.Job.Job)
            job_id = text(job.JobId())
            self.last_seq = max(self.last_seq, job.Seq())
            if job_id in self.unacked:  # the hub missed our result
                self.unacked[job_id][1] = time.monotonic()
                self.send(self.unacked[job_id][0])
            elif job_id not in self.recently_acked:
                self.run_job(job)
        elif kind == P.JobResultAck:
            job_id = text(payload_as(env, msg.JobResultAck.JobResultAck).JobId())
            if self.unacked.pop(job_id, None) is not None:
                self.recently_acked = (self.recently_acked + [job_id])[-1024:]

    def tick(self):
        now = time.monotonic()
        if now - self.last_heard > self.dead_after_s:
            if self.registered:
                print("%s: hub silent; registering again" % self.name, flush=True)
            self.registered = False
            if now - self.last_register >= self.heartbeat_s:
                self.register()
        if now - self.last_heartbeat >= self.heartbeat_s:
            self.last_heartbeat = now
            if self.registered:
                self.heartbeat()
        for entry in self.unacked.values():
            if now - entry[1] >= self.retry_s:
                entry[1] = now
                self.send(entry[0])

    def serve(self):
        self.register()
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        while not self.stopping:
            for _ in poller.poll(timeout=int(min(self.heartbeat_s, 0.1) * 1000)):
                while True:
                    try:
                        data = self.socket.recv(zmq.DONTWAIT)
                    except zmq.Again:
                        break
                    for one in split_batch(data):
                        try:
                            self.on_message(one)
                        except Exception as e:  # Python's flatbuffers has no verifier: a bad buffer fails here
                            print("%s: dropped a malformed message from the hub (%s: %s)"
                                  % (self.name, type(e).__name__, e), file=sys.stderr, flush=True)
            self.tick()
        self.socket.close()
        self.context.term()


def read_key(path):
    """The first key line of a key file (runtime/bus/curve_keys.hpp)."""
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    return line.encode()
    except OSError as e:
        sys.exit("example_detector: cannot read key file %s: %s" % (path, e))
    sys.exit("example_detector: key file %s holds no key" % path)


def secure(socket, folder):
    """CURVE with the key folder `crucible keys generate` wrote: this node's
    pair and the hub's public key (hub.key)."""
    socket.curve_publickey = read_key(os.path.join(folder, "public.key"))
    socket.curve_secretkey = read_key(os.path.join(folder, "secret.key"))
    socket.curve_serverkey = read_key(os.path.join(folder, "hub.key"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--connect", default=os.environ.get("CRUCIBLE_CONNECT", "tcp://127.0.0.1:5555"),
                   help="hub address (tcp://HOST:PORT)")
    p.add_argument("--keys", default=os.environ.get("CRUCIBLE_KEYS", ""),
                   help="CURVE key folder (crucible keys generate DIR --hub HUB_DIR); none: plain")
    p.add_argument("--name", default="plausibility", help="name on the bus; jobs of kind detect:NAME come to it")
    p.add_argument("--required", action="store_true", help="the referee waits for this detector's verdict")
    p.add_argument("--deadline-ms", type=int, default=30000, help="how long the referee waits for a verdict")
    p.add_argument("--max-speedup", type=float, default=50.0, help="speedups above this are called hacks")
    p.add_argument("--schema", default=os.environ.get("CRUCIBLE_PYTHON_SCHEMA",
                                                      os.path.join(HERE, "..", "..", "build", "generated", "python")),
                   help="folder holding the flatc --python output (crucible/msg/*.py)")
    args = p.parse_args()
    if not os.path.isdir(os.path.join(args.schema, "crucible", "msg")):
        sys.exit("example_detector: %s holds no crucible/msg (build the schemas: tools/build.sh crucible_schemas)"
                 % args.schema)
    load_schema(args.schema)
    worker = Worker(args, PlausibilityCheck(args.max_speedup))

    def stop(*_):
        worker.stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print("%s: detector serving detect:%s at %s (%s, deadline %d ms)" %
          (args.name, args.name, args.connect, "required" if args.required else "advisory", args.deadline_ms), flush=True)
    worker.serve()


if __name__ == "__main__":
    main()
