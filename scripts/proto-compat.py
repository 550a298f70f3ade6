#!/usr/bin/env python3
"""Checks that provetop's proto (proto/cuzk/v1/proving.proto) matches cuzk's published one
(tests/data/cuzk-proving.proto, Curio's extern/cuzk/cuzk-proto/proto/cuzk/v1/proving.proto) in
names, numbers and types: every service method, message, field and enum value of cuzk's is in
ours, the same. Ours may add fields, numbered from 100 on, and nothing else.

  scripts/proto-compat.py [--ours FILE] [--cuzk FILE]

Both files are compiled with grpc_tools' protoc into descriptors and compared. Before the real
check, a copy of cuzk's file with one thing changed (a number, a type, a name, a method's
types) must be caught, so a comparison that sees nothing fails. Exit 0 when they match, 1 with
each difference named, 2 on bad usage.
"""

import argparse
import os
import subprocess
import sys
import tempfile

try:
    from google.protobuf import descriptor_pb2
except ImportError as e:
    sys.exit(f"proto-compat: needs the protobuf and grpcio-tools packages ({e})")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Field numbers from here on are provetop's own.
OWN_FROM = 100


def descriptor(path):
    """The FileDescriptorProto of `path`, compiled by grpc_tools' protoc."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "set.pb")
        r = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{os.path.dirname(path)}",
             f"--descriptor_set_out={out}", os.path.basename(path)],
            capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"proto-compat: protoc failed on {path}: {r.stderr.strip()}")
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
        return fds.file[0]


def messages(fd):
    """Every message (nested ones too) by full name, and every enum by full name."""
    msgs, enums = {}, {}

    def walk(m, prefix):
        name = f"{prefix}.{m.name}"
        msgs[name] = m
        for e in m.enum_type:
            enums[f"{name}.{e.name}"] = e
        for n in m.nested_type:
            walk(n, name)

    for m in fd.message_type:
        walk(m, fd.package)
    for e in fd.enum_type:
        enums[f"{fd.package}.{e.name}"] = e
    return msgs, enums


def differences(cuzk, ours):
    """What in cuzk's descriptor ours lacks or has otherwise, and what ours adds wrongly."""
    out = []
    if cuzk.package != ours.package:
        out.append(f"package {ours.package!r}, not {cuzk.package!r}")
    svc = {s.name: s for s in ours.service}
    for s in cuzk.service:
        o = svc.get(s.name)
        if o is None:
            out.append(f"service {s.name} missing")
            continue
        methods = {m.name: m for m in o.method}
        for m in s.method:
            om = methods.get(m.name)
            if om is None:
                out.append(f"rpc {s.name}.{m.name} missing")
                continue
            for attr in ("input_type", "output_type", "client_streaming", "server_streaming"):
                if getattr(m, attr) != getattr(om, attr):
                    out.append(f"rpc {s.name}.{m.name}: {attr} {getattr(om, attr)!r}, "
                               f"not {getattr(m, attr)!r}")
        extra = set(methods) - {m.name for m in s.method}
        if extra:
            out.append(f"service {s.name}: methods cuzk lacks: {sorted(extra)}")
    cm, ce = messages(cuzk)
    om, oe = messages(ours)
    for name, m in cm.items():
        o = om.get(name)
        if o is None:
            out.append(f"message {name} missing")
            continue
        fields = {f.name: f for f in o.field}
        for f in m.field:
            of = fields.get(f.name)
            if of is None:
                out.append(f"{name}.{f.name} missing")
                continue
            for attr in ("number", "type", "label", "type_name", "oneof_index"):
                if f.HasField(attr) != of.HasField(attr) or getattr(f, attr) != getattr(of, attr):
                    out.append(f"{name}.{f.name}: {attr} {getattr(of, attr)!r}, not {getattr(f, attr)!r}")
        theirs = {f.name for f in m.field}
        for f in o.field:
            if f.name not in theirs and f.number < OWN_FROM:
                out.append(f"{name}.{f.name} = {f.number}: provetop's own fields take numbers from {OWN_FROM}")
    for name in set(om) - set(cm):
        out.append(f"message {name}: not in cuzk's file")
    for name, e in ce.items():
        o = oe.get(name)
        if o is None:
            out.append(f"enum {name} missing")
            continue
        theirs = [(v.name, v.number) for v in e.value]
        mine = [(v.name, v.number) for v in o.value]
        if theirs != mine:
            out.append(f"enum {name}: {mine}, not {theirs}")
    for name in set(oe) - set(ce):
        out.append(f"enum {name}: not in cuzk's file")
    return out


def self_check(cuzk_path):
    """Each of these changes to cuzk's file must be caught."""
    text = open(cuzk_path).read()
    changes = [
        ("string request_id = 1;", "string request_id = 9;"),
        ("uint64 sector_size = 3;", "uint32 sector_size = 3;"),
        ("bytes randomness = 22;", "bytes randomnes = 22;"),
        ("CRITICAL = 4;", "CRITICAL = 5;"),
        ("rpc Prove(ProveRequest) returns (ProveResponse);",
         "rpc Prove(ProveRequest) returns (AwaitProofResponse);"),
        ("repeated bytes vanilla_proofs = 11;", "bytes vanilla_proofs = 11;"),
    ]
    base = descriptor(cuzk_path)
    with tempfile.TemporaryDirectory() as d:
        for old, new in changes:
            if old not in text:
                raise SystemExit(f"proto-compat: self-check: {old!r} is not in {cuzk_path}")
            path = os.path.join(d, "proving.proto")
            with open(path, "w") as f:
                f.write(text.replace(old, new, 1))
            if not differences(base, descriptor(path)):
                raise SystemExit(f"proto-compat: self-check: changing {old!r} to {new!r} went unseen")
    return len(changes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", default=os.path.join(ROOT, "proto/cuzk/v1/proving.proto"))
    ap.add_argument("--cuzk", default=os.path.join(ROOT, "tests/data/cuzk-proving.proto"))
    args = ap.parse_args()
    for p in (args.ours, args.cuzk):
        if not os.path.isfile(p):
            print(f"proto-compat: {p}: no such file", file=sys.stderr)
            return 2
    caught = self_check(args.cuzk)
    cuzk, ours = descriptor(args.cuzk), descriptor(args.ours)
    diffs = differences(cuzk, ours)
    if diffs:
        print("proto-compat: provetop's proto differs from cuzk's:\n  " + "\n  ".join(diffs),
              file=sys.stderr)
        return 1
    _, oe = messages(ours)
    n = sum(len(m.field) for m in messages(cuzk)[0].values())
    print(f"proto-compat: cuzk.v1 matches: {len(cuzk.service[0].method)} methods, "
          f"{len(messages(cuzk)[0])} messages, {n} fields, {len(oe)} enums "
          f"(self-check: {caught} changes caught)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
