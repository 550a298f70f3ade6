#!/usr/bin/env python3
"""Reads a .pftrace with the `perfetto` package's perfetto_trace_pb2 (no trace processor) and
checks what `provetop export --perfetto OUT.pftrace` promises: a track per device engine,
worker and CPU pool under a track per device and the host, counter tracks with values, slices
that begin and end on known tracks, flows from synthesis to the device region to the proof,
and config changes and marks as instants. Prints one JSON line of what it found.

    scripts/pftrace-check.py TRACE [--want-config] [--want-mark]
"""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent


def main():
    path = sys.argv[1]
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks, counters = {}, set()
    begins, ends, instants, values = 0, 0, [], 0
    flows = {}  # flow id -> hops (track names)
    terminated = set()
    open_per_track = {}
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            tracks[d.uuid] = (d.name, d.parent_uuid if d.HasField("parent_uuid") else None)
            if d.HasField("counter"):
                counters.add(d.uuid)
            continue
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        assert e.track_uuid in tracks, f"event on an unknown track {e.track_uuid}"
        name = tracks[e.track_uuid][0]
        if e.type == TE.TYPE_SLICE_BEGIN:
            begins += 1
            open_per_track[e.track_uuid] = open_per_track.get(e.track_uuid, 0) + 1
            for f in e.flow_ids:
                flows.setdefault(f, []).append((p.timestamp, name))
        elif e.type == TE.TYPE_SLICE_END:
            ends += 1
            open_per_track[e.track_uuid] -= 1
        elif e.type == TE.TYPE_INSTANT:
            instants.append(e.name)
            for f in e.terminating_flow_ids:
                terminated.add(f)
        elif e.type == TE.TYPE_COUNTER:
            assert e.track_uuid in counters, f"a counter value on {name}, not a counter track"
            values += 1
    assert begins == ends and begins > 0, (begins, ends)
    assert all(v == 0 for v in open_per_track.values()), "a slice left open"
    groups = {u: n for u, (n, parent) in tracks.items() if parent is None}
    lanes = {
        (groups[parent], n) for u, (n, parent) in tracks.items() if parent is not None and u not in counters
    }
    counter_names = {tracks[u][0] for u in counters}
    assert "host" in groups.values(), groups
    devices = [g for g in groups.values() if g != "host"]
    assert devices, "no device track"
    for d in devices:
        assert (d, "compute") in lanes, f"{d}: no compute track in {sorted(lanes)}"
    assert any(n.startswith("worker ") for _, n in lanes), f"no worker track in {sorted(lanes)}"
    assert any(g == "host" and n.endswith(" pool") for g, n in lanes), f"no CPU pool track in {sorted(lanes)}"
    assert values > 0 and counter_names, "no counter values"
    whole = [f for f, hops in flows.items() if len(hops) >= 2 and f in terminated]
    assert whole, f"no flow from synthesis through a device region to a proof: {list(flows.items())[:3]}"
    for f in whole:
        hops = [n for _, n in sorted(flows[f])]
        assert hops[0].startswith("synthesis") and any(h.startswith("compute") for h in hops[1:]), f"a flow through {hops}"
    if "--want-config" in sys.argv:
        assert any(" → " in n for n in instants), f"no config change instant in {instants[:5]}"
    if "--want-mark" in sys.argv:
        assert any(n.startswith("mark: ") for n in instants), "no mark instant"
    print(json.dumps({
        "tracks": len(tracks), "counter_tracks": len(counters), "slices": begins,
        "counter_values": values, "instants": len(instants), "flows": len(whole),
        "devices": devices,
    }))


if __name__ == "__main__":
    main()
