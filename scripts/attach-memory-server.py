#!/usr/bin/env python3
"""A provetop.v1.Telemetry server that sends a huge history: a recording's header as the hello,
then the recording's event frames over and over until BYTES of frames have gone, then CaughtUp.
The frames are a real recording's bytes, so `provetop attach --summary` decodes them as it would a
server's. Usage: attach-memory-server.py STUBS_DIR RECORDING BYTES PORT_FILE (the port it
listens on, on loopback, is written to PORT_FILE)."""
import struct
import sys
import time
from concurrent import futures

FILE_FIXED = 28
FRAME_HEADER = 44
KIND_EVENTS = 1


def frames(path):
    """The recording's header bytes and its events frames, each whole."""
    data = open(path, "rb").read()
    (json_len,) = struct.unpack_from("<I", data, 20)
    header_end = FILE_FIXED + json_len
    out, i = [], header_end
    while i + FRAME_HEADER <= len(data) and data[i:i + 4] == b"PTRF":
        (stored,) = struct.unpack_from("<I", data, i + 8)
        end = i + FRAME_HEADER + stored
        if data[i + 4] == KIND_EVENTS:
            out.append(data[i:end])
        i = end
    if not out:
        sys.exit(f"{path}: no events frames")
    return data[:header_end], out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    stubs, recording, total, port_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    sys.path.insert(0, stubs)
    import grpc
    from provetop.v1 import telemetry_pb2 as pb
    from provetop.v1 import telemetry_pb2_grpc as rpc

    header, events = frames(recording)

    class Telemetry(rpc.TelemetryServicer):
        def Watch(self, request, context):
            yield pb.WatchMessage(hello=pb.Hello(
                header=header, session_id="attach-memory", control=False,
                control_note="read-only", resumed=False, now=1, history_seconds=600))
            sent, seq = 0, 0
            while sent < total:
                f = events[seq % len(events)]
                seq += 1
                sent += len(f)
                yield pb.WatchMessage(frame=pb.Frame(data=f, seq=seq))
            yield pb.WatchMessage(caught_up=pb.CaughtUp())
            print(f"sent {seq} frames, {sent} bytes", file=sys.stderr, flush=True)
            # Live from here: nothing more, until the viewer leaves.
            while context.is_active():
                time.sleep(0.2)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    rpc.add_TelemetryServicer_to_server(Telemetry(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with open(port_file, "w") as f:
        f.write(str(port))
    server.wait_for_termination()


if __name__ == "__main__":
    main()
