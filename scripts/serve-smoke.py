#!/usr/bin/env python3
# A smoke test of `provetop serve` from a client generated from proto/cuzk/v1/proving.proto with
# grpcio-tools: python3 -m grpc_tools.protoc -Iproto --python_out=OUT --grpc_python_out=OUT
# cuzk/v1/proving.proto; then PYTHONPATH=OUT scripts/serve-smoke.py ADDR REQUEST.json
import sys, grpc
from google.protobuf import json_format
from cuzk.v1 import proving_pb2 as pb, proving_pb2_grpc as rpc
ch = grpc.insecure_channel(sys.argv[1], options=[("grpc.max_send_message_length", 200<<20)])
s = rpc.ProvingEngineStub(ch)
req = json_format.Parse(open(sys.argv[2]).read(), pb.SubmitProofRequest())
r = s.Prove(pb.ProveRequest(submit=req), timeout=240).result
print("prove", pb.AwaitProofResponse.Status.Name(r.status), len(r.proof), r.error_message, r.synthesis_ms, r.gpu_compute_ms, r.total_ms)
open(sys.argv[3] if len(sys.argv) > 3 else "proof.bin", "wb").write(r.proof)
bad = pb.SubmitProofRequest(); bad.CopyFrom(req); bad.request_id = "bad"; bad.sector_size = 8 << 20
r = s.Prove(pb.ProveRequest(submit=bad)).result
print("bad", pb.AwaitProofResponse.Status.Name(r.status), r.error_message)
st = s.GetStatus(pb.GetStatusRequest())
print("status", st.total_proofs_completed, st.total_proofs_failed, [(q.proof_kind, q.pending, q.in_progress) for q in st.queues], [(x.circuit_id, x.size_bytes) for x in st.loaded_srs])
print("metrics", len(s.GetMetrics(pb.GetMetricsRequest()).prometheus_text))
