#!/usr/bin/env python3
"""`provetop serve` end to end from a client generated from proto/cuzk/v1/proving.proto.

  PYTHONPATH=STUBS scripts/serve-test.py --bin target/debug/provetop [--cache DIR]

STUBS holds the modules `python3 -m grpc_tools.protoc -Iproto --python_out=STUBS
--grpc_python_out=STUBS cuzk/v1/proving.proto` writes (scripts/test.sh makes them). --cache is
the XDG cache the PoRep tests share (their sealed 2KiB sector and its parameters), so nothing is
set up twice. The servers run with the cpu backend, one job at a time (a request sent while a
proof runs stays queued) and --test-params (parameters made here). What is checked, in order:

  * cuzk's answers (issue 43's table; issue 46's rows 1 and 8), through cuzk's wire schema only:
    a request with sector_size 32 GiB and a 2KiB registered proof proves and `provetop verify`
    accepts it; job_id is the request_id (a random UUID without one); cancel and await by it;
    priority 0 is the kind's Curio priority, FIFO within it; proof_kind 0 and other requests
    that can never prove are INVALID_ARGUMENT at submit; a retry joins, another payload under
    the id is INVALID_ARGUMENT, an answered id ALREADY_EXISTS; /status has every key of cuzk's
    schema while a proof runs; cuzk's metric names in GetMetrics and at --metrics-addr; after a
    kill -9 and a restart without --test-params the old ids are NOT_FOUND and a request is
    refused FAILED_PRECONDITION naming the parameter file; verify without the .vk exits 2;

  * a unix-socket server: the socket is owner-only; with --drain-timeout 1, SIGTERM during a
    proof far from done exits 3;
  * a TCP server: Prove answers COMPLETED with a proof `provetop verify` accepts and rejects
    with a byte flipped; a request queued behind it is CANCELLED by CancelProof; 1,000 hostile
    requests are each refused with a message, cheaply, and the server lives on; one request_id
    submitted twice at once is one job; GetStatus and GetMetrics agree with what was done;
    SIGTERM during that job's proof: the proof reaches both callers, new requests are refused,
    exit 0; and the proof verifies;
  * another kind: a WindowPoSt partition of the same sector, as Curio sends it (HIGH), proved
    and accepted by verify_window_post; a tampered vanilla proof answered FAILED.

Exit 0 when everything held, 1 with the failed check named, 2 on bad usage.
"""

import argparse
import base64
import concurrent.futures as cf
import ctypes
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import grpc
from google.protobuf import json_format
from prometheus_client.parser import text_string_to_metric_families

try:
    from cuzk.v1 import proving_pb2 as pb
    from cuzk.v1 import proving_pb2_grpc as rpc
except ImportError as e:
    sys.exit(f"serve-test: the generated client is not on PYTHONPATH ({e}); see --help")

Status = pb.AwaitProofResponse.Status
# request.rs's limits: Curio's 256 MiB messages, a vanilla proof up to 1 MiB less.
MAX_REQUEST_ID = 256
MAX_MESSAGE = 256 << 20
MAX_VANILLA = MAX_MESSAGE - (1 << 20)
HOSTILE = 1000
SEED = 20261203
# A hostile request is refused before any proving: far below a proof's time.
HOSTILE_SLOW_S = 20.0
PROOF_TIMEOUT_S = 600.0


class Failed(Exception):
    """A check that did not hold."""


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def log(msg):
    print(f"serve-test: [{time.monotonic() - T0:6.1f} s] {msg}", flush=True)


T0 = time.monotonic()


def die_with_parent():
    # The servers die with this script even if it is killed outright.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Server:
    """One `provetop serve` child: its stderr kept (and in a log file), killed at the end."""

    all = []

    def __init__(self, args, env, work, name, listen, extra=("--test-params",)):
        self.name = name
        self.lines = []
        self.cond = threading.Condition()
        self.log_path = os.path.join(work, f"{name}.log")
        cmd = [args.bin, "serve", "--backend", "cpu", "--in-flight", "1", "--listen", listen]
        cmd += list(extra)
        self.proc = subprocess.Popen(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            preexec_fn=die_with_parent,
        )
        Server.all.append(self)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with open(self.log_path, "w") as f:
            for line in self.proc.stderr:
                f.write(line)
                f.flush()
                with self.cond:
                    self.lines.append(line.rstrip("\n"))
                    self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_line(self, pattern, timeout):
        """The first stderr line matching `pattern` (a regex), waiting up to `timeout` s."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self.cond:
            while True:
                for line in self.lines[seen:]:
                    m = rx.search(line)
                    if m:
                        return m
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    raise Failed(
                        f"{self.name}: no stderr line /{pattern}/ within {timeout:.0f} s "
                        f"(exit {self.proc.poll()}); stderr:\n{self.tail()}"
                    )
                self.cond.wait(min(left, 0.5))

    def listening(self, timeout=120):
        """The address from `serve: listening on ADDR (…)`."""
        return self.wait_line(r"serve: listening on (\S+) \(", timeout).group(1)

    def alive(self):
        return self.proc.poll() is None

    def tail(self, n=25):
        with self.cond:
            return "\n".join("    " + line for line in self.lines[-n:])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    @classmethod
    def kill_all(cls):
        for s in cls.all:
            s.kill()


def channel(target):
    opts = [
        ("grpc.max_send_message_length", MAX_MESSAGE + (8 << 20)),
        ("grpc.max_receive_message_length", MAX_MESSAGE + (8 << 20)),
    ]
    if target.startswith("unix:"):
        # gRPC's C core sends the socket's path as :authority, which the server's HTTP/2 (h2)
        # refuses with PROTOCOL_ERROR (hyperium/h2#487); Go's clients send `localhost`.
        opts.append(("grpc.default_authority", "localhost"))
    ch = grpc.insecure_channel(target, options=opts)
    grpc.channel_ready_future(ch).result(timeout=30)
    return ch, rpc.ProvingEngineStub(ch)


def status(stub):
    return stub.GetStatus(pb.GetStatusRequest(), timeout=30)


def porep_queue(st):
    qs = [q for q in st.queues if q.proof_kind == "porep_seal_commit"]
    check(len(qs) == 1, f"GetStatus lists {len(qs)} porep_seal_commit queues: {st.queues}")
    return qs[0]


def wait_status(stub, what, pred, timeout):
    """Polls GetStatus until `pred` holds; returns that status."""
    deadline = time.monotonic() + timeout
    while True:
        st = status(stub)
        if pred(st):
            return st
        if time.monotonic() > deadline:
            raise Failed(f"GetStatus: {what} not seen within {timeout:.0f} s; last: {st}")
        time.sleep(0.2)


def with_id(base, request_id):
    r = pb.SubmitProofRequest()
    r.CopyFrom(base)
    r.request_id = request_id
    return r


def verify(args, env, work, req_path, proofs):
    """`provetop verify`'s exit code and output for each (name, proof bytes), run side by side
    (each loads the verifying key on its own)."""
    runs = []
    for name, proof in proofs:
        path = os.path.join(work, f"{name}.bin")
        with open(path, "wb") as f:
            f.write(proof)
        runs.append(subprocess.Popen(
            [args.bin, "verify", "--test-params", "--request", req_path, "--proof", path],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    out = []
    for p in runs:
        text, _ = p.communicate(timeout=300)
        out.append((p.returncode, text.strip()))
    return out


def check_proof(args, env, work, req_path, answer, name, flipped=False):
    """`answer` is COMPLETED with 192-byte proofs that verify (and, with `flipped`, that one
    flipped byte does not)."""
    check(
        answer.status == Status.COMPLETED,
        f"{name}: {Status.Name(answer.status)} ({answer.error_message!r}), not COMPLETED",
    )
    check(
        len(answer.proof) > 0 and len(answer.proof) % 192 == 0,
        f"{name}: the proof has {len(answer.proof)} bytes, not 192 per partition",
    )
    runs = [(name, answer.proof)]
    if flipped:
        bad = bytearray(answer.proof)
        bad[100] ^= 0x01
        runs.append((f"{name}-flipped", bytes(bad)))
    results = verify(args, env, work, req_path, runs)
    rc, out = results[0]
    check(rc == 0, f"{name}: provetop verify exited {rc} on the served proof: {out}")
    if flipped:
        rc, out = results[1]
        check(rc == 1, f"provetop verify exited {rc} on a proof with a flipped byte, not 1: {out}")
    return answer.proof


# ------------------------------------------------------------------------------------------
# Hostile requests: each is refused, with a message, and fast.


class Hostile:
    """Builds the hostile pass's requests from the real one, all from one seeded generator."""

    def __init__(self, base, rng):
        self.base = base
        self.rng = rng
        self.outer = json.loads(base.vanilla_proof)
        self.inner_text = base64.b64decode(self.outer["Phase1Out"])
        self.what = {}  # request_id → what is wrong with it, where that is not its category

    def req(self, i, **fields):
        r = with_id(self.base, f"hostile-{i}")
        for k, v in fields.items():
            setattr(r, k, v)
        return r

    def vanilla(self, outer=None, inner=None):
        o = dict(self.outer) if outer is None else outer
        if inner is not None:
            o["Phase1Out"] = base64.b64encode(json.dumps(inner).encode()).decode()
        return json.dumps(o).encode()

    def random_json(self, depth=0):
        r = self.rng
        k = r.randrange(7 if depth < 4 else 4)
        if k == 0:
            return r.randrange(-(2**70), 2**70)
        if k == 1:
            return r.random() * 10 ** r.randrange(-300, 300)
        if k == 2:
            return "".join(chr(r.randrange(1, 0x2FF)) for _ in range(r.randrange(20)))
        if k == 3:
            return r.choice([None, True, False])
        if k == 4:
            return [self.random_json(depth + 1) for _ in range(r.randrange(6))]
        keys = ["Phase1Out", "SectorNum", "SectorSize", "ProverId", "vanilla_proofs", "comm_r",
                "comm_d", "replica_id", "seed", "ticket", "registered_proof", "x"]
        return {r.choice(keys): self.random_json(depth + 1) for _ in range(r.randrange(6))}

    def leaf_paths(self):
        """Where the C1 output's numbers are (found once: the walk is slow in Python)."""
        if not hasattr(self, "_leaves"):
            leaves = []

            def walk(x, path):
                if isinstance(x, bool):
                    return
                if isinstance(x, (int, float)):
                    leaves.append(path)
                elif isinstance(x, list):
                    for i, y in enumerate(x):
                        walk(y, path + (i,))
                elif isinstance(x, dict):
                    for k, y in x.items():
                        walk(y, path + (k,))

            walk(json.loads(self.inner_text), ())
            # The commitments, seed, ticket and replica id: each is checked before proving.
            # (Some single-byte changes deep inside the vanilla proofs pass filecoin-proofs'
            # vanilla check and are only caught by the proof itself, minutes later.)
            top = ("comm_r", "comm_d", "seed", "ticket", "replica_id")
            self._leaves = [p for p in leaves if p[0] in top]
        return self._leaves

    def mutate_leaf(self, v):
        """`v` (the C1 output) with one number deep inside changed (within 0..255 where it was)."""
        r = self.rng
        path = r.choice(self.leaf_paths())
        parent = v
        for k in path[:-1]:
            parent = parent[k]
        old = parent[path[-1]]
        small = isinstance(old, int) and 0 <= old < 256
        parent[path[-1]] = (old + r.randrange(1, 256)) % 256 if small else old + 1
        self.mutated = path
        return v

    def structured(self, i):
        """The real wrapper or C1 output with one thing wrong."""
        r = self.rng
        k = r.randrange(14)
        self.what[f"hostile-{i}"] = f"mutation {k}"
        outer = dict(self.outer)  # its values are scalars
        inner = json.loads(self.inner_text) if k not in (7, 8, 9, 10, 11) else None
        if k == 0:
            # Not registered_proof: the C1 layouts may leave it out (the request names it).
            del inner[r.choice(sorted(set(inner) - {"registered_proof"}))]
        elif k == 1:
            key = r.choice(sorted(inner))
            inner[key] = self.random_json(2)
        elif k == 2:
            inner = self.mutate_leaf(inner)
            self.what[f"hostile-{i}"] += f" at {self.mutated}"
        elif k == 3:
            vp = inner["vanilla_proofs"]
            tag = next(iter(vp)) if isinstance(vp, dict) else None
            parts = vp[tag] if tag else vp
            parts[:] = [] if r.random() < 0.3 else parts + parts
        elif k == 4:
            inner["vanilla_proofs"] = {"StackedDrg32GiBV1": inner["vanilla_proofs"]}
        elif k == 5:
            inner["registered_proof"] = r.choice(["StackedDrg8MiBV1_1", "Nope", 5, None])
        elif k == 6:
            inner[r.choice(["comm_r", "comm_d", "seed", "ticket"])] = r.choice(
                [[0] * 32, [1] * 31, [256] * 32, "x", [-1] * 32, [0] * 33])
        elif k == 7:
            outer["Phase1Out"] = outer["Phase1Out"][: r.randrange(len(outer["Phase1Out"]))]
            return self.vanilla(outer)
        elif k == 8:
            outer["Phase1Out"] = r.choice(["!!!", "", 7, None, base64.b64encode(b"[1,2]").decode()])
            return self.vanilla(outer)
        elif k == 9:
            outer["SectorSize"] = r.choice([0, 1, 4096, 8 << 20, 2**64 - 1, "2048", -2048])
            return self.vanilla(outer)
        elif k == 10:
            outer["SectorNum"] = r.choice([8, 0, 2**63])
            return self.vanilla(outer)
        elif k == 11:
            outer["ProverId"] = r.choice(["f01001", "nonsense", "f0", "t0" + "9" * 30])
            return self.vanilla(outer)
        elif k == 12:
            # Several leaves at once.
            for _ in range(r.randrange(2, 20)):
                inner = self.mutate_leaf(inner)
        else:
            inner["replica_id"] = self.random_json(3)
        return self.vanilla(outer, inner)

    def deep_json(self):
        d = self.rng.randrange(100, 200_000)
        return (b"[" * d) + (b"]" * d if self.rng.random() < 0.5 else b"")

    def items(self):
        """(category, call) pairs: `call(stub)` answers how the server responded."""
        r = self.rng
        b = self.base
        out = []

        def submit(cat, req):
            out.append((cat, ("submit", req)))

        i = 0
        n_truncated, n_random, n_json, n_struct = 110, 70, 70, 250
        for _ in range(n_truncated):
            i += 1
            submit("truncated vanilla_proof",
                   self.req(i, vanilla_proof=b.vanilla_proof[: r.randrange(1, len(b.vanilla_proof))]))
        for _ in range(n_random):
            i += 1
            submit("random vanilla_proof", self.req(i, vanilla_proof=r.randbytes(r.randrange(1, 4096))))
        for _ in range(n_json):
            i += 1
            v = self.deep_json() if r.random() < 0.15 else json.dumps(self.random_json()).encode()
            submit("random JSON vanilla_proof", self.req(i, vanilla_proof=v))
        for _ in range(n_struct):
            i += 1
            submit("one thing wrong in the C1 output", self.req(i, vanilla_proof=self.structured(i)))
        # sector_size only labels, as in cuzk (cuzk_rows_test proves one sent with 32 GiB).
        # Registered ids: 0-4 V1 (2K 8M 512M 32G 64G), 5-9 V1_1, 10-14 V1_1 feature variants.
        for _ in range(60):
            i += 1
            rp = r.choice([0, 1, 2, 3, 4, 6, 7, 8, 9, 12, 15, 99, 2**32, 2**64 - 1])
            size = {1: 8 << 20, 6: 8 << 20, 2: 512 << 20, 7: 512 << 20, 3: 32 << 30,
                    8: 32 << 30, 4: 64 << 30, 9: 64 << 30}.get(rp, 2048)
            if r.random() < 0.5:
                size = 2048
            submit("registered_proof not the sector's", self.req(i, registered_proof=rp, sector_size=size))
        for _ in range(40):
            i += 1
            if r.random() < 0.5:
                submit("wrong sector_number", self.req(i, sector_number=r.choice([0, 6, 8, 2**64 - 1])))
            else:
                submit("wrong miner_id", self.req(i, miner_id=r.choice([0, 1, 999, 1001, 2**64 - 1])))
        for _ in range(60):
            i += 1
            k = r.randrange(3)
            if k == 0:
                submit("unknown proof_kind", self.req(i, proof_kind=r.choice([5, 99, -1, 2**31 - 1])))
            elif k == 1:
                submit("another proof kind's fields", self.req(i, proof_kind=r.choice([0, 2, 3, 4])))
            else:
                submit("unknown priority", self.req(i, priority=r.choice([5, 99, -1, -(2**31)])))
        for _ in range(40):
            i += 1
            k = r.randrange(4)
            if k == 0:
                submit("empty request", pb.SubmitProofRequest(request_id=f"hostile-{i}"))
            elif k == 1:
                submit("empty vanilla_proof", self.req(i, vanilla_proof=b""))
            elif k == 2:
                req = self.req(i, vanilla_proof=b"")
                req.vanilla_proofs.extend([b"", b"x"])
                submit("vanilla_proofs instead of vanilla_proof", req)
            else:
                submit("empty request_id, broken C1 output",
                       with_id(self.req(i, vanilla_proof=b"{}"), ""))
        # Near and over the limits. The ~192 MiB ones go one at a time (see `run_hostile`).
        i += 1
        submit("request_id at the limit", with_id(self.req(i, sector_number=8), "r" * MAX_REQUEST_ID))
        for n in [MAX_REQUEST_ID + 1, 4096, 1 << 20]:
            i += 1
            submit("request_id over the limit", with_id(b, "r" * n))
        for field in ["randomness", "comm_r_old", "comm_r_new", "comm_d_new"]:
            i += 1
            submit("huge unused field, broken C1 output",
                   self.req(i, vanilla_proof=b"[]", **{field: r.randbytes(4 << 20)}))
        i += 1
        req = self.req(i)
        req.vanilla_proofs.extend([b"v"] * 100_000)
        submit("100,000 vanilla_proofs", req)
        # Made when sent, one at a time: each is ~200 MB.
        for n, what in [(MAX_VANILLA, "vanilla_proof at the limit"),
                        (MAX_VANILLA + 1, "vanilla_proof over the limit"),
                        (MAX_MESSAGE + 16, "message over the limit")]:
            i += 1
            out.append((f"huge: {what}", ("submit-huge", i, n)))
        n_submits = len(out)
        # Cancels: unknown ids, and the hostile jobs' own ids while they are checked or after.
        for _ in range(40):
            out.append(("cancel of an unknown id", ("cancel", r.choice(
                ["", "job-0", "job-999999", "porep-1000-7", "x" * 100_000, "\x00", "job--1",
                 "job-" + str(r.randrange(10**6, 10**9))]))))
        for _ in range(60):
            out.append(("cancel of a hostile job in flight or done", ("cancel-hostile", r.randrange(n_submits))))
        for _ in range(70):
            out.append(("AwaitProof of an unknown id", ("await", r.choice(
                ["", "job-0", "job-999999", "x" * 100_000, "hostile-999999", "job-" + "9" * 40]),
                r.choice([0, 1, 100, 2**64 - 1]))))
        out.append(("Prove with no submit", ("prove-empty",)))
        for cid in ["", "porep-32g", "porep-64g", "porep-1k", "wpost-32g", "x" * 10_000]:
            out.append(("PreloadSRS of a set that cannot be made here", ("preload", cid)))
        for cid in ["", "porep-9g", "snap-1k", "wpost"]:
            out.append(("EvictSRS of an unknown set", ("evict", cid)))
        out.append(("EvictSRS of the set a proof uses", ("evict-busy", "porep-2k")))
        # Fill up to HOSTILE with more of the richest kind.
        while len(out) < HOSTILE:
            i += 1
            out.insert(n_submits, ("one thing wrong in the C1 output",
                                   ("submit", self.req(i, vanilla_proof=self.structured(i)))))
            n_submits += 1
        check(len(out) == HOSTILE, f"{len(out)} hostile requests built, not {HOSTILE}")
        # The busy set's eviction goes first, while the proof surely runs; the huge ones last.
        first = [x for x in out if x[1][0] == "evict-busy"]
        huge = [x for x in out if x[0].startswith("huge:")]
        rest = [x for x in out if x not in first and x not in huge]
        r.shuffle(rest)
        return first, rest, huge


def grpc_error(e):
    """(code name, message) of an RPC error."""
    return e.code().name, e.details() or ""


class HostileRun:
    """Sends the hostile requests and judges each answer."""

    def __init__(self, stub, hostile):
        self.stub = stub
        self.stub_req = lambda i, v: hostile.req(i, vanilla_proof=v)
        self.what = hostile.what
        self.lock = threading.Lock()
        self.submitted_ids = []  # job ids the hostile submits were given, in order
        self.cancelled = set()  # job ids a hostile cancel found open
        self.cancelled_answers = []  # (category, job id) answered CANCELLED
        self.problems = []
        self.counts = {}
        self.failed_jobs = 0  # FAILED answers for a job the server kept (GetStatus counts them)
        self.slowest = (0.0, "")

    def problem(self, cat, msg):
        with self.lock:
            self.problems.append(f"{cat}: {msg}")

    def one(self, cat, call):
        start = time.monotonic()
        try:
            self._one(cat, call)
        except grpc.RpcError as e:
            code, msg = grpc_error(e)
            if code == "DEADLINE_EXCEEDED":
                rid = call[1].request_id if call[0] == "submit" else ""
                self.problem(cat, f"no answer within {HOSTILE_SLOW_S:.0f} s "
                             f"({rid} {self.what.get(rid, '')})")
            elif not msg:
                self.problem(cat, f"gRPC error {code} without a message")
        except Failed as e:
            self.problem(cat, str(e))
        took = time.monotonic() - start
        with self.lock:
            self.counts[cat] = self.counts.get(cat, 0) + 1
            if took > self.slowest[0]:
                self.slowest = (took, cat)
        if took > HOSTILE_SLOW_S:
            self.problem(cat, f"took {took:.1f} s: refused late, or the server worked on it")

    def refused(self, cat, a, job_id):
        if a.status == Status.CANCELLED and job_id:
            # Judged at the end: the cancel's own answer may come back after this one.
            with self.lock:
                self.cancelled_answers.append((cat, job_id))
            return
        check(a.status == Status.FAILED,
              f"answered {Status.Name(a.status)} ({a.error_message!r}), not FAILED")
        check(a.error_message.strip() != "", "FAILED without an error_message")
        check(not a.proof, "FAILED with proof bytes")
        if job_id:
            with self.lock:
                self.failed_jobs += 1

    def _one(self, cat, call):
        s = self.stub
        t = HOSTILE_SLOW_S
        kind = call[0]
        if kind == "submit-huge":
            # Spaces are JSON's whitespace: the parser reads them all before the x.
            req = self.stub_req(call[1], b" " * (call[2] - 1) + b"x")
            a = s.Prove(pb.ProveRequest(submit=req), timeout=t).result
            self.refused(cat, a, a.job_id)
        elif kind == "submit":
            req = call[1]
            if random.Random(req.request_id).random() < 0.5:
                a = s.Prove(pb.ProveRequest(submit=req), timeout=t).result
                self.refused(cat, a, a.job_id)
            else:
                sub = s.SubmitProof(req, timeout=t)
                check(sub.job_id != "", "SubmitProof answered no job_id")
                with self.lock:
                    self.submitted_ids.append(sub.job_id)
                a = s.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id), timeout=t)
                check(a.job_id == sub.job_id, f"AwaitProof answered for {a.job_id}, not {sub.job_id}")
                self.refused(cat, a, sub.job_id)
        elif kind in ("cancel", "cancel-hostile"):
            if kind == "cancel":
                job = call[1]
            else:
                with self.lock:
                    ids = list(self.submitted_ids)
                # A recent id with its last character changed, or a made-up one: ids are the
                # request_ids (or random ones), so neither names a job.
                rng = random.Random(call[1])
                job = (ids[-1][:-1] + rng.choice("xyz")) if ids else f"hostile-{rng.randrange(3, 1000)}"
            try:
                c = s.CancelProof(pb.CancelProofRequest(job_id=job), timeout=t)
            except grpc.RpcError as e:
                code, msg = grpc_error(e)
                check(code == "NOT_FOUND" and msg, f"{code} {msg!r}, not NOT_FOUND with a message")
                return
            check(kind == "cancel-hostile", f"cancel of unknown id {job[:40]!r} answered {c}")
            check(not c.was_running, f"cancel of {job} found it running: a hostile request reached the engine")
            with self.lock:
                self.cancelled.add(job)
        elif kind == "await":
            try:
                a = s.AwaitProof(pb.AwaitProofRequest(job_id=call[1], timeout_ms=call[2]), timeout=t)
            except grpc.RpcError as e:
                code, msg = grpc_error(e)
                check(code == "NOT_FOUND" and msg, f"{code} {msg!r}, not NOT_FOUND with a message")
                return
            raise Failed(f"AwaitProof of unknown {call[1][:40]!r} answered {Status.Name(a.status)}")
        elif kind == "prove-empty":
            try:
                a = s.Prove(pb.ProveRequest(), timeout=t).result
                self.refused(cat, a, "")
            except grpc.RpcError as e:
                code, msg = grpc_error(e)
                check(code == "INVALID_ARGUMENT" and msg, f"{code} {msg!r}")
        elif kind in ("preload", "evict", "evict-busy"):
            try:
                if kind == "preload":
                    x = s.PreloadSRS(pb.PreloadSrsRequest(circuit_id=call[1]), timeout=t)
                else:
                    x = s.EvictSRS(pb.EvictSrsRequest(circuit_id=call[1]), timeout=t)
            except grpc.RpcError as e:
                code, msg = grpc_error(e)
                want = "FAILED_PRECONDITION" if kind == "evict-busy" else None
                check(msg and (want is None or code == want), f"{code} {msg!r}")
                return
            raise Failed(f"{call[1][:40]!r} answered {x}")
        else:
            raise Failed(f"unknown hostile call {kind}")

    def run(self, first, items, huge, workers=6):
        for cat, call in first:
            self.one(cat, call)
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda x: self.one(*x), items))
        # One at a time: each holds ~200 MB on both sides.
        for cat, call in huge:
            self.one(cat, call)
        for cat, job in self.cancelled_answers:
            if job not in self.cancelled:
                self.problem(cat, f"{job} answered CANCELLED, and no cancel of it succeeded")
        return len(first) + len(items) + len(huge)


# ------------------------------------------------------------------------------------------


def metric_families(text):
    fams = {}
    for f in text_string_to_metric_families(text):
        fams[f.name] = f
    return fams


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the provetop binary to test")
    ap.add_argument("--cache", help="XDG_CACHE_HOME shared with the PoRep tests (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, request, proofs)")
    args = ap.parse_args()
    args.bin = os.path.realpath(args.bin)
    if not os.access(args.bin, os.X_OK):
        print(f"serve-test: --bin {args.bin} is not an executable", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="provetop-serve-test-")
    env = dict(os.environ)
    env.update(
        XDG_CACHE_HOME=os.path.realpath(args.cache) if args.cache else os.path.join(work, "cache"),
        XDG_STATE_HOME=os.path.join(work, "state"),
        XDG_CONFIG_HOME=os.path.join(work, "config"),
    )
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
    # The script's own SIGTERM/SIGINT still runs the cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    ok = False
    try:
        counts = run(args, env, work)
        ok = True
        log(f"PASSED: {counts}; {time.monotonic() - T0:.0f} s")
        return 0
    except Failed as e:
        print(f"serve-test: FAILED: {e}", file=sys.stderr)
        for s in Server.all:
            print(f"serve-test: {s.name} (exit {s.proc.poll()}), last stderr lines ({s.log_path}):\n"
                  f"{s.tail()}", file=sys.stderr)
        return 1
    finally:
        Server.kill_all()
        if ok and not args.keep:
            subprocess.run(["rm", "-rf", work])
        else:
            print(f"serve-test: logs, request and proofs in {work}", file=sys.stderr)


def run(args, env, work):
    req_path = os.path.join(work, "req.json")
    log("gen-vanilla: the request Curio would send for the cached 2KiB test sector")
    g = subprocess.run(
        [args.bin, "gen-vanilla", "--kind", "porep", "--sector-size", "2KiB", "--miner-id", "1000",
         "--sector-id", "7", "--out", req_path],
        env=env, capture_output=True, text=True, timeout=900,
    )
    check(g.returncode == 0, f"gen-vanilla exited {g.returncode}: {g.stderr.strip()}")
    with open(req_path) as f:
        req = json_format.Parse(f.read(), pb.SubmitProofRequest())
    check(req.proof_kind == pb.POREP_SEAL_COMMIT and req.sector_size == 2048 and req.sector_number == 7
          and req.miner_id == 1000 and len(req.vanilla_proof) > 0, f"gen-vanilla's request: {req}")

    cuzk_rows_test(args, env, work, req)
    drain_test(args, env, work, req)
    counts = main_test(args, env, work, req_path, req)
    window_test(args, env, work)
    return counts + ", a WindowPoSt partition verified and a tampered one refused"


def window_test(args, env, work):
    """Another kind: a WindowPoSt partition of the same sector (HIGH, as Curio sends it) proved
    and accepted by verify_window_post; a tampered vanilla proof FAILED with the reason."""
    path = os.path.join(work, "window.json")
    g = subprocess.run(
        [args.bin, "gen-vanilla", "--kind", "window-post", "--sector-size", "2KiB",
         "--miner-id", "1000", "--sector-id", "7", "--out", path],
        env=env, capture_output=True, text=True, timeout=300,
    )
    check(g.returncode == 0, f"gen-vanilla --kind window-post exited {g.returncode}: {g.stderr.strip()}")
    with open(path) as f:
        req = json_format.Parse(f.read(), pb.SubmitProofRequest())
    check(req.proof_kind == pb.WINDOW_POST_PARTITION and req.priority == pb.HIGH
          and len(req.vanilla_proofs) == 1 and len(req.randomness) == 32,
          f"gen-vanilla's WindowPoSt request: kind {req.proof_kind}, priority {req.priority}")
    srv = Server(args, env, work, "serve-window", "127.0.0.1:0")
    ch, stub = channel(srv.listening())
    a = stub.Prove(pb.ProveRequest(submit=with_id(req, "wpost-1")), timeout=PROOF_TIMEOUT_S).result
    check_proof(args, env, work, path, a, "wpost-1", flipped=True)
    st = status(stub)
    check("wpost-2k" in {s.circuit_id for s in st.loaded_srs}, f"loaded_srs: {list(st.loaded_srs)}")
    q = [x for x in st.queues if x.proof_kind == "window_post_partition"]
    check(len(q) == 1 and q[0].pending == 0 and q[0].in_progress == 0, f"queues: {st.queues}")
    bad = with_id(req, "wpost-tampered")
    proof = bytearray(bad.vanilla_proofs[0])
    proof[len(proof) // 2] ^= 1
    bad.vanilla_proofs[0] = bytes(proof)
    t = stub.Prove(pb.ProveRequest(submit=bad), timeout=60).result
    # Its openings no longer reach the sector's comm_r_last (or the field no longer names their
    # root): either check names it.
    check(t.status == Status.FAILED and not t.proof
          and ("do not verify" in t.error_message or "comm_r_last" in t.error_message),
          f"a tampered WindowPoSt vanilla proof: {Status.Name(t.status)} {t.error_message!r}")
    # Other randomness challenges other leaves: FAILED naming the sector, challenge and check.
    other = with_id(req, "wpost-other-randomness")
    other.randomness = bytes([req.randomness[0] ^ 1]) + req.randomness[1:]
    o = stub.Prove(pb.ProveRequest(submit=other), timeout=60).result
    check(o.status == Status.FAILED and "sector 7, challenge 0 (leaf" in o.error_message
          and "the leaf check fails" in o.error_message,
          f"a WindowPoSt of other randomness: {Status.Name(o.status)} {o.error_message!r}")
    # A byte flipped anywhere (every 499th here, and in comm_r_last, the last 32 bytes): FAILED
    # with the reason before any proving, and no panic text on serve's stderr (issue 46, row 15).
    done = st.total_proofs_completed
    for i in list(range(0, len(proof), 499)) + [len(proof) - 32]:
        flipped = bytearray(req.vanilla_proofs[0])
        flipped[i] ^= 0x80
        bad.vanilla_proofs[0] = bytes(flipped)
        bad.request_id = f"wpost-flip-{i}"
        f = stub.Prove(pb.ProveRequest(submit=bad), timeout=60).result
        check(f.status == Status.FAILED and f.error_message and not f.proof and f.total_ms < 10_000,
              f"WindowPoSt vanilla proof, byte {i} flipped: {Status.Name(f.status)} "
              f"in {f.total_ms} ms {f.error_message!r}")
    check(status(stub).total_proofs_completed == done, "a flipped vanilla proof was proved")
    # A WinningPoSt whose comm_r_last field (its last 32 bytes) disagrees with its openings'
    # root passed filecoin's vanilla check and failed after proving: now refused at once.
    g = subprocess.run(
        [args.bin, "gen-vanilla", "--kind", "winning-post", "--sector-size", "2KiB",
         "--miner-id", "1000", "--sector-id", "7", "--out", path + ".winning"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    check(g.returncode == 0, f"gen-vanilla --kind winning-post exited {g.returncode}: {g.stderr.strip()}")
    with open(path + ".winning") as f:
        win = json_format.Parse(f.read(), pb.SubmitProofRequest())
    flipped = bytearray(win.vanilla_proofs[0])
    flipped[-32] ^= 1
    win.vanilla_proofs[0] = bytes(flipped)
    w = stub.Prove(pb.ProveRequest(submit=with_id(win, "winning-flipped")), timeout=60).result
    check(w.status == Status.FAILED and "comm_r_last" in w.error_message and w.total_ms < 10_000,
          f"a WinningPoSt with its comm_r_last flipped: {Status.Name(w.status)} in {w.total_ms} ms "
          f"{w.error_message!r}")
    panics = [line for line in srv.lines if "panicked" in line or "backtrace" in line]
    check(not panics, f"serve printed panic text for a client's vanilla proofs: {panics[:3]}")
    srv.proc.send_signal(signal.SIGTERM)
    rc = srv.proc.wait(timeout=60)
    ch.close()
    check(rc == 0, f"serve-window exited {rc} after SIGTERM with nothing open, not 0")
    log(f"wpost-1: WINDOW_POST_PARTITION COMPLETED in {a.total_ms / 1000:.1f} s, verify_window_post "
        f"accepts it (a flipped byte: rejected); a tampered vanilla proof FAILED: {t.error_message}; "
        f"other randomness FAILED: {o.error_message}")


CUZK_METRICS = ["cuzk_proofs_completed", "cuzk_proofs_failed", "cuzk_proof_duration_seconds",
                "cuzk_queue_depth", "cuzk_running_jobs", "cuzk_gpu_workers", "cuzk_uptime_seconds"]


def http_get(addr, path):
    with urllib.request.urlopen(f"http://{addr}{path}", timeout=30) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def refused(call, code, says):
    """`call()` raises a gRPC error `code` whose message contains `says`; returns the message."""
    try:
        x = call()
    except grpc.RpcError as e:
        got, msg = grpc_error(e)
        check(got == code and says in msg, f"{got} {msg!r}, not {code} saying {says!r}")
        return msg
    raise Failed(f"answered {x!r}, not {code} ({says})")


def check_status_page(doc):
    """cuzk's /status schema, each key with its type."""
    def keys(obj, where, want):
        check(isinstance(obj, dict), f"/status {where} is {type(obj).__name__}, not an object")
        missing = [k for k in want if k not in obj]
        check(not missing, f"/status {where} lacks {missing}: {obj}")
        for k, t in want.items():
            check(isinstance(obj[k], t), f"/status {where}.{k} = {obj[k]!r}, not {t}")

    num, opt = (int, float), (str, type(None))
    keys(doc, "", {"uptime_secs": int, "memory": dict, "synthesis": dict, "pipelines": list,
                   "gpu_workers": list, "allocations": dict, "counters": dict, "buffers": dict})
    keys(doc["memory"], "memory", {"total_bytes": int, "used_bytes": int, "available_bytes": int})
    check(doc["memory"]["total_bytes"] > 0, f"/status memory: {doc['memory']}")
    keys(doc["synthesis"], "synthesis", {"max_concurrent": int, "active": int})
    for p in doc["pipelines"]:
        keys(p, "pipelines[]", {"job_id": str, "proof_kind": str, "started_secs_ago": int,
                                "total_partitions": int, "partitions_done": int, "partitions": list})
        for q in p["partitions"]:
            keys(q, "partitions[]", {"index": int, "state": str, "synth_ms": int, "gpu_ms": int})
            check(q["state"] in ("pending", "synthesizing", "synth_done", "gpu", "done", "failed"),
                  f"/status partition state {q['state']!r}")
    for w in doc["gpu_workers"]:
        keys(w, "gpu_workers[]", {"worker_id": int, "gpu_ordinal": int, "state": str,
                                  "current_job": opt, "current_partition": (int, type(None)),
                                  "busy_secs": num})
        check(w["state"] in ("idle", "proving"), f"/status worker state {w['state']!r}")
    keys(doc["allocations"], "allocations", {"srs": list, "pce": list})
    for a in doc["allocations"]["srs"]:
        keys(a, "allocations.srs[]", {"circuit_id": str, "bytes": int, "evictable": bool})
        check("last_used_secs_ago" in a, f"/status srs row lacks last_used_secs_ago: {a}")
    for a in doc["allocations"]["pce"]:
        keys(a, "allocations.pce[]", {"circuit_id": str, "bytes": int, "evictable": bool})
        check("last_used_secs_ago" in a, f"/status pce row lacks last_used_secs_ago: {a}")
    keys(doc["counters"], "counters", {"total_completed": int, "total_failed": int,
                                       "completed_by_kind": dict, "failed_by_kind": dict,
                                       "queue_depth": int})


def cuzk_rows_test(args, env, work, req):
    """Each row of issue 43's table as cuzk's client sees it, and issue 46's identity rows (1
    and 8): ids that never name another request's job (across a kill -9 and restart too), a
    reused request_id that joins only the same open request, Filecoin's parameters by default
    (refused at submit naming the file), /status and cuzk's metric names while a proof runs."""
    srv = Server(args, env, work, "serve-cuzk", "127.0.0.1:0",
                 ["--test-params", "--status-listen", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"])
    ch, stub = channel(srv.listening())
    status_addr = srv.wait_line(r"status page at http://(\S+)/status", 30).group(1)
    metrics_addr = srv.wait_line(r"metrics: serving http://(\S+)/metrics", 30).group(1)
    st = status(stub)
    check(st.parameters.startswith("test:"), f"GetStatus.parameters with --test-params: {st.parameters!r}")

    # Row 1: sector_size 32 GiB with a 2KiB registered proof proves (the size is the registered
    # proof's), as Curio's benchmark client sends it. Row 2: its job_id is its request_id.
    big = with_id(req, "row-size")
    big.sector_size = 34359738368
    sub = stub.SubmitProof(big, timeout=120)
    check(sub.job_id == "row-size", f"job_id {sub.job_id!r}, not the request_id row-size")
    big_path = os.path.join(work, "req-32g.json")
    with open(big_path, "w") as f:
        f.write(json_format.MessageToJson(big))

    # /status while it runs: every key of cuzk's schema, the proof among the pipelines.
    deadline = time.monotonic() + 300
    while True:
        code, ctype, body = http_get(status_addr, "/status")
        doc = json.loads(body)
        rows = [p for p in doc["pipelines"] if p["job_id"] == "row-size"]
        busy = [w for w in doc["gpu_workers"] if w["state"] == "proving"]
        if rows and busy:
            break
        check(time.monotonic() < deadline, f"/status never showed row-size on a worker: {body[:2000]}")
        time.sleep(0.2)
    check(code == 200 and "json" in ctype, f"/status: {code} {ctype}")
    check_status_page(doc)
    check(rows[0]["proof_kind"] == "porep_seal_commit" and rows[0]["total_partitions"] >= 1,
          f"/status pipeline: {rows[0]}")
    check(busy[0]["current_job"] == "row-size", f"/status worker: {busy[0]}")
    # The PoRep circuit proves from its recorded matrices (cuzk's "pce"), held beside its SRS.
    pce = doc["allocations"]["pce"]
    check(any(a["circuit_id"].startswith("porep") and a["bytes"] > 0 for a in pce),
          f"/status allocations.pce while a PoRep proves: {pce}")
    check(doc["provetop"]["parameters"].startswith("test:"), f"/status provetop: {doc['provetop']}")
    log(f"/status while row-size proves: every key; partitions "
        f"{[q['state'] for q in rows[0]['partitions']]}, worker {busy[0]['worker_id']} proving")

    # Row 5: priority 0 is the kind's Curio priority (NORMAL for PoRep), FIFO within it;
    # queue_position says where each waits. Row 3: CancelProof and AwaitProof by request_id.
    queued = [("q-normal", 0, 0), ("q-low", pb.LOW, 1), ("q-normal-2", 0, 1), ("q-high", pb.HIGH, 0)]
    for rid, prio, want in queued:
        r = with_id(req, rid)
        r.priority = prio
        s = stub.SubmitProof(r, timeout=120)
        check(s.job_id == rid and s.queue_position == want,
              f"{rid} (priority {prio}): job {s.job_id!r} at {s.queue_position}, not {rid!r} at {want}")
    anon = stub.SubmitProof(with_id(req, ""), timeout=120).job_id
    check(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", anon),
          f"a request without request_id got job {anon!r}, not a random UUID")
    t = stub.AwaitProof(pb.AwaitProofRequest(job_id="q-low", timeout_ms=100), timeout=30)
    check(t.status == Status.TIMEOUT and t.job_id == "q-low", f"AwaitProof(q-low, 100 ms): {t}")
    for rid in [q[0] for q in queued] + [anon]:
        c = stub.CancelProof(pb.CancelProofRequest(job_id=rid), timeout=30)
        check(not c.was_running, f"CancelProof({rid}) of a queued request: was_running")
        a = stub.AwaitProof(pb.AwaitProofRequest(job_id=rid), timeout=30)
        check(a.status == Status.CANCELLED and a.job_id == rid, f"{rid} after cancel: {a}")
    log("priority 0 -> NORMAL, FIFO within it (queue positions 0,1,1,0); cancel/await by request_id")

    # Row 4: what can never prove is INVALID_ARGUMENT at submit, Prove too, and is no job.
    for what, field, value, says in [("proof_kind 0", "proof_kind", 0, "unspecified"),
                                     ("proof_kind 9", "proof_kind", 9, "proof_kind 9"),
                                     ("registered_proof 99", "registered_proof", 99, "99")]:
        r = with_id(req, f"never-{field}")
        setattr(r, field, value)
        refused(lambda: stub.SubmitProof(r, timeout=30), "INVALID_ARGUMENT", says)
        refused(lambda: stub.Prove(pb.ProveRequest(submit=r), timeout=30), "INVALID_ARGUMENT", says)
        refused(lambda: stub.AwaitProof(pb.AwaitProofRequest(job_id=r.request_id), timeout=30),
                "NOT_FOUND", r.request_id)
    # Issue 46 row 8: a reused request_id joins only the same open request.
    same = stub.SubmitProof(big, timeout=120)
    check(same.job_id == "row-size", f"a retry of row-size got {same.job_id!r}")
    q = porep_queue(status(stub))
    check((q.pending, q.in_progress) == (0, 1), f"a retry made another job: {q}")
    other = with_id(big, "row-size")
    other.sector_number = 8
    refused(lambda: stub.SubmitProof(other, timeout=30), "INVALID_ARGUMENT", "another request")
    again = with_id(req, "q-low")
    again.priority = pb.LOW
    refused(lambda: stub.SubmitProof(again, timeout=30), "ALREADY_EXISTS", "CANCELLED")
    log("INVALID_ARGUMENT at submit for kind 0, kind 9, registered proof 99; a retry joins, "
        "another payload INVALID_ARGUMENT, a cancelled id ALREADY_EXISTS")

    # Row 1's proof verifies (verify reads sector_size as serve does).
    a = stub.AwaitProof(pb.AwaitProofRequest(job_id="row-size"), timeout=PROOF_TIMEOUT_S)
    check_proof(args, env, work, big_path, a, "row-size")
    refused(lambda: stub.SubmitProof(big, timeout=30), "ALREADY_EXISTS", "COMPLETED")

    # Row 6: cuzk's metric names beside ours, in GetMetrics and at --metrics-addr.
    for where, text in [("GetMetrics", stub.GetMetrics(pb.GetMetricsRequest(), timeout=30).prometheus_text),
                        ("--metrics-addr", http_get(metrics_addr, "/metrics")[2])]:
        fams = metric_families(text)
        missing = [m for m in CUZK_METRICS + ["provetop_proofs"] if m not in fams]
        check(not missing, f"{where} lacks {missing}")
        done = {s.labels.get("proof_kind"): s.value for s in fams["cuzk_proofs_completed"].samples
                if s.name == "cuzk_proofs_completed_total"}
        check(done.get("porep_seal_commit") == 1, f"{where}: cuzk_proofs_completed_total {done}")
        n = [s.value for s in fams["cuzk_proof_duration_seconds"].samples
             if s.name == "cuzk_proof_duration_seconds_count" and s.labels["proof_kind"] == "porep_seal_commit"]
        check(n == [1], f"{where}: cuzk_proof_duration_seconds_count {n}")
    try:
        http_get(metrics_addr, "/status")
        raise Failed("--metrics-addr serves /status: the status page is off unless --status-listen")
    except urllib.error.HTTPError as e:
        check(e.code == 404, f"/status at --metrics-addr: HTTP {e.code}")

    # Cancel of a running request: was_running, then CANCELLED.
    run = stub.SubmitProof(with_id(req, ""), timeout=120).job_id
    wait_status(stub, f"{run} running", lambda st: porep_queue(st).in_progress == 1, 120)
    c = stub.CancelProof(pb.CancelProofRequest(job_id=run), timeout=30)
    check(c.was_running, f"CancelProof of the running {run}: was_running false")
    # The engine answers once the partition on its device ends (unreported): a proof's time at most.
    a = stub.AwaitProof(pb.AwaitProofRequest(job_id=run), timeout=PROOF_TIMEOUT_S)
    check(a.status == Status.CANCELLED, f"{run} after cancel: {Status.Name(a.status)}")
    log(f"row-size: COMPLETED with sector_size 32 GiB, verify accepts; cuzk's metrics in GetMetrics and "
        f"/metrics; a running job cancelled (was_running)")

    # Issue 46 row 1: kill -9 and restart, now with Filecoin's parameters (an empty folder): the
    # old ids are NOT_FOUND, and a request is refused at submit naming the file it needs.
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    ch.close()
    empty = os.path.join(work, "no-params")
    os.makedirs(empty, exist_ok=True)
    env2 = dict(env, FIL_PROOFS_PARAMETER_CACHE=empty)
    srv = Server(args, env2, work, "serve-filecoin", "127.0.0.1:0", [])
    srv.wait_line(rf"parameters: filecoin: {re.escape(empty)}", 60)
    ch, stub = channel(srv.listening())
    check(status(stub).parameters == f"filecoin: {empty}", f"GetStatus.parameters: {status(stub).parameters!r}")
    for old in ["row-size", run, anon]:
        refused(lambda: stub.AwaitProof(pb.AwaitProofRequest(job_id=old, timeout_ms=100), timeout=30),
                "NOT_FOUND", old[:20])
    for rid in ["fresh", "fresh"]:  # refused, not a job: the same id may come again
        msg = refused(lambda: stub.SubmitProof(with_id(req, rid), timeout=120), "FAILED_PRECONDITION",
                      "v28-stacked-proof-of-replication-")
        check(empty in msg and ".params" in msg, f"the refusal does not name the file: {msg!r}")
    srv.proc.send_signal(signal.SIGTERM)
    rc = srv.proc.wait(timeout=60)
    ch.close()
    check(rc == 0, f"serve-filecoin exited {rc} after SIGTERM, not 0")
    # verify needs only the .vk, never makes parameters: none here, exit 2 naming it.
    proof = os.path.join(work, "row-size.bin")
    v = subprocess.run([args.bin, "verify", "--request", big_path, "--proof", proof],
                       env=env2, capture_output=True, text=True, timeout=120)
    check(v.returncode == 2 and re.search(rf"{re.escape(empty)}/v28-stacked-proof-of-replication-\S+\.vk", v.stderr),
          f"verify without the .vk: exit {v.returncode}: {v.stderr.strip()}")
    log(f"kill -9 and restart: old ids NOT_FOUND; without --test-params a request is refused "
        f"naming {msg.split()[1]}; verify without it: exit 2 naming the .vk")


def drain_test(args, env, work, req):
    """A unix socket, owner-only; --drain-timeout 1 with a proof far from done: exit 3."""
    sock_dir = tempfile.mkdtemp(prefix="pt-serve-", dir="/tmp")
    sock = os.path.join(sock_dir, "serve.sock")
    srv = Server(args, env, work, "serve-unix", f"unix://{sock}", ["--test-params", "--drain-timeout", "1"])
    addr = srv.listening()
    check(addr == f"unix://{sock}", f"serve-unix says it listens on {addr}, not unix://{sock}")
    m = os.stat(sock)
    check(stat.S_ISSOCK(m.st_mode), f"{sock} is not a socket")
    check(m.st_uid == os.getuid(), f"{sock} belongs to uid {m.st_uid}, not ours")
    check(m.st_mode & 0o077 == 0, f"{sock} has mode {stat.filemode(m.st_mode)}: others can open it")
    log(f"serve-unix: listening on {addr}, mode {stat.filemode(m.st_mode)}")
    ch, stub = channel(f"unix:{sock}")
    sub = stub.SubmitProof(with_id(req, "drain-1"), timeout=120)
    outcome = {}

    def wait():
        try:
            outcome["answer"] = stub.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id), timeout=PROOF_TIMEOUT_S)
        except grpc.RpcError as e:
            outcome["error"] = grpc_error(e)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    wait_status(stub, "the proof running", lambda st: porep_queue(st).in_progress == 1, 300)
    log("serve-unix: drain-1 running")
    start = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    try:
        rc = srv.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise Failed("serve-unix: still running 60 s after SIGTERM with --drain-timeout 1")
    took = time.monotonic() - start
    waiter.join(timeout=30)
    ch.close()
    check(rc == 3, f"serve-unix: exit {rc} after SIGTERM with the proof unfinished, not 3")
    srv.wait_line(r"1 request\(s\) unfinished", 5)
    a = outcome.get("answer")
    check(a is not None, f"serve-unix: the waiting caller got no answer: {outcome.get('error')}")
    check(a.status == Status.FAILED and "--drain-timeout" in a.error_message,
          f"serve-unix: the caller of the unfinished proof got {Status.Name(a.status)} "
          f"{a.error_message!r}, not FAILED naming --drain-timeout")
    check(took < 15, f"serve-unix: took {took:.1f} s to exit after a 1 s drain")
    log(f"serve-unix: SIGTERM with a proof far from done: exit 3 after {took:.1f} s; "
        f"its caller got FAILED: {a.error_message}")
    subprocess.run(["rm", "-rf", sock_dir])


def main_test(args, env, work, req_path, req):
    # The drain waits for the proof in flight, however long two busy cores take.
    srv = Server(args, env, work, "serve-tcp", "127.0.0.1:0", ["--test-params", "--drain-timeout", "600"])
    addr = srv.listening()
    check(re.fullmatch(r"127\.0\.0\.1:\d+", addr) is not None, f"serve-tcp listens on {addr}")
    log(f"serve-tcp: listening on {addr}")
    ch, stub = channel(addr)
    st = status(stub)
    check(st.total_proofs_completed == 0 and st.total_proofs_failed == 0, f"a fresh server's totals: {st}")
    check(len(st.gpus) == 0, f"the cpu backend reports GPUs: {st.gpus}")
    check({q.proof_kind for q in st.queues} >= {"porep_seal_commit", "winning_post"}, f"queues: {st.queues}")

    # 0. Tiers: PreloadSRS makes porep-2k hot, EvictSRS moves it to cold (still listed), and the
    # first proof brings it back.
    pre = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-2k"), timeout=300)
    tier = lambda: {s.circuit_id: pb.SRSStatus.Tier.Name(s.tier) for s in status(stub).loaded_srs}
    check(not pre.already_loaded and tier() == {"porep-2k": "HOT"},
          f"after PreloadSRS: already_loaded {pre.already_loaded}, tiers {tier()}")
    ev = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-2k"), timeout=30)
    check(ev.was_loaded and ev.freed_bytes > 0 and tier() == {"porep-2k": "COLD"},
          f"after EvictSRS: {ev}, tiers {tier()}")
    log(f"porep-2k: PreloadSRS in {pre.load_time_ms} ms -> HOT; EvictSRS freed "
        f"{ev.freed_bytes >> 10} KiB -> COLD")

    # 1. Prove: the first request (job-1), on its own thread.
    first = {}

    def prove():
        try:
            first["answer"] = stub.Prove(pb.ProveRequest(submit=with_id(req, "prove-1")),
                                         timeout=PROOF_TIMEOUT_S).result
        except grpc.RpcError as e:
            first["error"] = grpc_error(e)

    prover = threading.Thread(target=prove, daemon=True)
    prover.start()
    st = wait_status(stub, "the first proof running",
                     lambda st: porep_queue(st).in_progress == 1 or not prover.is_alive(), 300)
    check(prover.is_alive(), f"Prove returned before its proof ran: {first}")
    check(porep_queue(st).pending == 0, f"pending with one proof running: {porep_queue(st)}")
    srs = {s.circuit_id: s for s in st.loaded_srs}
    check("porep-2k" in srs and srs["porep-2k"].size_bytes > 0,
          f"loaded_srs during the first proof: {list(st.loaded_srs)}")
    check(srs["porep-2k"].ref_count == 1, f"porep-2k's ref_count with one proof running: {srs['porep-2k']}")
    log("prove-1: running (job-1); porep-2k loaded")

    # 2. A request queued behind it, cancelled.
    q = stub.SubmitProof(with_id(req, "queued-1"), timeout=120)
    check(q.job_id == "queued-1", f"the second request's job_id is {q.job_id!r}, not its request_id")
    st = status(stub)
    check((porep_queue(st).pending, porep_queue(st).in_progress) == (1, 1),
          f"one queued and one running expected: {porep_queue(st)}")
    c = stub.CancelProof(pb.CancelProofRequest(job_id=q.job_id), timeout=30)
    check(not c.was_running, "CancelProof of a queued request says it was running")
    a = stub.AwaitProof(pb.AwaitProofRequest(job_id=q.job_id, timeout_ms=10_000), timeout=30)
    check(a.status == Status.CANCELLED, f"the cancelled request answers {Status.Name(a.status)}, not CANCELLED")
    check(porep_queue(status(stub)).pending == 0, "the cancelled request is still pending")
    try:
        stub.CancelProof(pb.CancelProofRequest(job_id=q.job_id), timeout=30)
        raise Failed("a second CancelProof of a cancelled request succeeded")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.NOT_FOUND, f"a second cancel: {grpc_error(e)}")
    log("queued-1: queued behind prove-1, CancelProof -> CANCELLED (was_running false)")

    # 2b. A Prove whose caller leaves (its deadline passes) while it waits behind prove-1: its
    # job is cancelled, not left to prove for no one (issue 46, row 7).
    try:
        stub.Prove(pb.ProveRequest(submit=with_id(req, "abandoned-1")), timeout=1)
        raise Failed("Prove of abandoned-1 answered within 1 s while prove-1 runs")
    except grpc.RpcError as e:
        # tonic ends the call at the deadline it was sent (CANCELLED), or the client first.
        check(e.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED),
              f"Prove with a 1 s deadline: {grpc_error(e)}")
    a = stub.AwaitProof(pb.AwaitProofRequest(job_id="abandoned-1", timeout_ms=30_000), timeout=60)
    check(a.status == Status.CANCELLED,
          f"abandoned-1 answers {Status.Name(a.status)} ({a.error_message!r}), not CANCELLED")
    st = status(stub)
    check(porep_queue(st).pending == 0 and st.queued_requests == 0,
          f"the abandoned request still waits: {porep_queue(st)}, queued_requests {st.queued_requests}")
    log("abandoned-1: its Prove's caller left after 1 s; the job CANCELLED")

    # 3. The hostile pass, while the first proof runs.
    rng = random.Random(SEED)
    hostile = Hostile(req, rng)
    first_items, items, huge = hostile.items()
    before = status(stub)
    h_start = time.monotonic()
    hr = HostileRun(stub, hostile)
    n_hostile = hr.run(first_items, items, huge)
    h_took = time.monotonic() - h_start
    check(srv.alive(), f"serve-tcp died during the hostile pass (exit {srv.proc.poll()})")
    if hr.problems:
        shown = "\n  ".join(hr.problems[:30])
        raise Failed(f"{len(hr.problems)} hostile request(s) not refused properly:\n  {shown}")
    st = status(stub)
    check(porep_queue(st).pending == 0, f"hostile requests left pending: {porep_queue(st)}")
    check(st.total_proofs_failed - before.total_proofs_failed == hr.failed_jobs,
          f"GetStatus counts {st.total_proofs_failed - before.total_proofs_failed} failures over the "
          f"hostile pass; the clients saw {hr.failed_jobs} FAILED jobs")
    log(f"hostile: {n_hostile} requests in {h_took:.1f} s, each refused with a message "
        f"(slowest {hr.slowest[0]:.2f} s: {hr.slowest[1]}; {len(hr.cancelled)} cancels won their race); "
        f"server alive")
    first_running = prover.is_alive()

    # 4. One request_id sent twice at once: one job, queued behind (or after) the first proof.
    barrier = threading.Barrier(2)
    retry = {}

    def submit_and_await(k):
        try:
            barrier.wait(timeout=30)
            s = stub.SubmitProof(with_id(req, "retry-1"), timeout=120)
            retry[f"job{k}"] = s.job_id
            retry[f"answer{k}"] = stub.AwaitProof(pb.AwaitProofRequest(job_id=s.job_id),
                                                  timeout=PROOF_TIMEOUT_S)
        except grpc.RpcError as e:
            retry[f"error{k}"] = grpc_error(e)

    retriers = [threading.Thread(target=submit_and_await, args=(k,), daemon=True) for k in (0, 1)]
    for t in retriers:
        t.start()
    deadline = time.monotonic() + 120
    while ("job0" not in retry or "job1" not in retry) and time.monotonic() < deadline:
        check("error0" not in retry and "error1" not in retry, f"SubmitProof of retry-1: {retry}")
        time.sleep(0.05)
    check(retry.get("job0") and retry.get("job0") == retry.get("job1"),
          f"the same request_id twice got job ids {retry.get('job0')!r} and {retry.get('job1')!r}")
    if first_running and prover.is_alive():
        q = porep_queue(status(stub))
        if prover.is_alive():
            check(q.pending + q.in_progress == 2, f"retry-1 twice is not one job in the queue: {q}")
    log(f"retry-1: submitted twice at once, one job ({retry['job0']})")

    # 5. The first proof.
    prover.join(timeout=PROOF_TIMEOUT_S)
    check("answer" in first, f"Prove of prove-1: {first.get('error', 'no answer')}")
    p1 = first["answer"]
    check_proof(args, env, work, req_path, p1, "prove-1", flipped=True)
    log(f"prove-1: COMPLETED in {p1.total_ms / 1000:.1f} s (synthesis {p1.synthesis_ms} ms, "
        f"compute {p1.gpu_compute_ms} ms, srs load {p1.srs_load_ms} ms); verify: 0, flipped byte: 1")

    # 6. Status and metrics while retry-1 runs.
    st = wait_status(stub, "retry-1 running", lambda st: porep_queue(st).in_progress == 1
                     or st.total_proofs_completed >= 2, 120)
    check(st.total_proofs_completed == 1, f"completed {st.total_proofs_completed} with one proof answered")
    check(st.uptime_seconds > 0, f"uptime_seconds {st.uptime_seconds}")
    srs = {s.circuit_id: s for s in st.loaded_srs}
    check(list(srs) == ["porep-2k"] and srs["porep-2k"].tier == pb.SRSStatus.HOT,
          f"loaded_srs: {list(st.loaded_srs)}")
    for qs in st.queues:
        if qs.proof_kind != "porep_seal_commit":
            check(qs.pending == 0 and qs.in_progress == 0, f"queue {qs.proof_kind}: {qs}")
    check(porep_queue(st).pending == 0, f"porep queue {porep_queue(st)}")
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=30).prometheus_text
    fams = metric_families(text)
    want = ["provetop_proofs", "provetop_partition_stage_seconds", "provetop_pipeline_partitions",
            "provetop_process_resident_memory_bytes", "provetop_host_memory_used_bytes"]
    missing = [w for w in want if w not in fams]
    check(not missing, f"GetMetrics lacks {missing}; it has {sorted(fams)}")
    proved = sum(s.value for s in fams["provetop_proofs"].samples
                 if s.name == "provetop_proofs_total" and s.labels.get("result", "verified") == "verified")
    check(proved >= 1, f"provetop_proofs_total counts {proved} verified proofs after one: "
          f"{fams['provetop_proofs'].samples}")
    log(f"GetStatus: completed 1, failed {st.total_proofs_failed}, uptime {st.uptime_seconds} s, "
        f"porep-2k {srs['porep-2k'].size_bytes >> 20} MiB; GetMetrics: {len(fams)} families")

    # 7. SIGTERM while retry-1 proves: it finishes and reaches both callers, new requests are
    # refused, exit 0.
    check(any(t.is_alive() for t in retriers), "retry-1 finished before SIGTERM could be sent")
    srv.proc.send_signal(signal.SIGTERM)
    srv.wait_line(r"serve: stopping", 30)
    try:
        stub.SubmitProof(with_id(req, "after-sigterm"), timeout=30)
        raise Failed("SubmitProof after SIGTERM was accepted")
    except grpc.RpcError as e:
        code, msg = grpc_error(e)
        check("shutting down" in msg, f"SubmitProof after SIGTERM: {code} {msg!r}")
    try:
        a = stub.Prove(pb.ProveRequest(submit=with_id(req, "after-sigterm-2")), timeout=30).result
        raise Failed(f"Prove after SIGTERM answered {Status.Name(a.status)}, not UNAVAILABLE")
    except grpc.RpcError as e:
        code, msg = grpc_error(e)
        check(code == "UNAVAILABLE" and "shutting down" in msg, f"Prove after SIGTERM: {code} {msg!r}")
    for t in retriers:
        t.join(timeout=PROOF_TIMEOUT_S)
    check("answer0" in retry and "answer1" in retry, f"retry-1's callers after SIGTERM: {retry}")
    a0, a1 = retry["answer0"], retry["answer1"]
    check(a0.proof == a1.proof, "the two callers of retry-1 got different proofs")
    try:
        final = status(stub)
    except grpc.RpcError:
        final = None  # already closed: the drain ends 0.3 s after the last answer
    try:
        rc = srv.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise Failed("serve-tcp still running 60 s after its last request was answered")
    check(rc == 0, f"serve-tcp exited {rc} after a clean drain, not 0")
    check_proof(args, env, work, req_path, a0, "retry-1")
    if final is not None:
        check(final.total_proofs_completed == 2,
              f"completed {final.total_proofs_completed} after prove-1 and retry-1 (twice), not 2")
    log(f"retry-1: COMPLETED to both callers after SIGTERM; one proof counted"
        f"{'' if final else ' (status not read: closed)'}; verify: 0; new requests refused; exit 0")
    ch.close()
    return (f"{2} proofs verified, 1 cancelled, {n_hostile} hostile refused, "
            f"drain exits 3 and 0")


if __name__ == "__main__":
    sys.exit(main())
