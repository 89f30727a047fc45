#!/usr/bin/python3
"""gRPC admission before parsing, end to end. hexir-serve decides a ModelInfer call on the
model_name read off its bytes: a call refused (every session busy and the queue full) is never
parsed, an admitted one copies its tensors once, and gRPC's transport holds at most
--grpc-max-inflight for every call together. Sixteen concurrent 48 MiB calls (8 valid, 8 with a
wrong shape) against one session and no queue: every call gets an answer a client can act on
(OK equal to NumPy, UNAVAILABLE, RESOURCE_EXHAUSTED or INVALID_ARGUMENT), the server's peak
memory stays within the in-flight bound plus what the admitted calls hold (it took about
twice each message per call before), and the server still answers afterwards. A message that
names two models, and --grpc-max-inflight below --grpc-max-message, are refused.
Usage: grpc_admission_test.py --bin BUILD/tools
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from checks import check, summary  # noqa: E402
from serving import grpc_messages  # noqa: E402

SERVICE = "/inference.GRPCInferenceService/"
N = 12 * 1024 * 1024  # 48 MiB of f32 per message
MIB = 1024 * 1024


def peak_and_rss_mib(pid):
    status = open(f"/proc/{pid}/status").read()
    return (int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) // 1024,
            int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) // 1024)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    import grpc
    with tempfile.TemporaryDirectory(prefix="hexir-grpc-admission-") as tmp:
        pb = grpc_messages(ROOT, tmp)
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [N])
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{tmp}/relu.onnx")
        subprocess.run([os.path.join(tools, "hexir-compile"), f"{tmp}/relu.onnx", "-o", f"{tmp}/relu.hxb"], check=True)

        serve = [os.path.join(tools, "hexir-serve"), "--port", "0", "--grpc-port", "0", "--sessions", "1",
                 "--max-queue", "0", "--model", f"m={tmp}/relu.hxb", "--grpc-max-message", "64M"]
        r = subprocess.run(serve + ["--grpc-max-inflight", "32M"], capture_output=True, text=True, timeout=60)
        check("--grpc-max-inflight below --grpc-max-message: refused at start",
              r.returncode != 0 and "one message must fit" in r.stderr, r.stderr)

        server = subprocess.Popen(serve + ["--grpc-max-inflight", "64M"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        line = server.stdout.readline() + server.stdout.readline()
        port = re.search(r"gRPC listening on 127.0.0.1:(\d+)", line)
        if not check("hexir-serve --grpc-max-inflight 64M starts", port is not None, line):
            server.kill()
            return summary()
        try:
            idle, _ = peak_and_rss_mib(server.pid)
            rng = np.random.default_rng(3)
            data = rng.standard_normal(N).astype(np.float32)
            want = np.maximum(data, 0)

            def message(shape, names=("m",)):
                q = pb.ModelInferRequest(model_name=names[0], id="big")
                q.inputs.add(name="x", datatype="FP32", shape=[shape])
                q.raw_input_contents.append(data.tobytes())
                raw = q.SerializeToString()
                for extra in names[1:]:  # a later model_name: protobuf keeps the last
                    raw += pb.ModelInferRequest(model_name=extra).SerializeToString()
                return raw

            valid, wrong = message(N), message(N - 1)
            results, details = [], []

            def call(raw):
                channel = grpc.insecure_channel(f"127.0.0.1:{port.group(1)}",
                                                options=[("grpc.max_send_message_length", 256 * MIB),
                                                         ("grpc.max_receive_message_length", 256 * MIB)])
                fn = channel.unary_unary(SERVICE + "ModelInfer", request_serializer=lambda m: m,
                                         response_deserializer=pb.ModelInferResponse.FromString)
                try:
                    answer = fn(raw, timeout=120)
                    got = np.frombuffer(answer.raw_output_contents[0], np.float32)
                    results.append(("OK", got.shape == want.shape and np.array_equal(got, want)))
                except grpc.RpcError as e:
                    results.append((e.code().name, True))
                    details.append(e.details())
                channel.close()

            threads = [threading.Thread(target=call, args=(raw,)) for raw in [valid, wrong] * 8]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            codes = sorted(code for code, _ in results)
            check("16 concurrent 48 MiB calls: each answered OK, UNAVAILABLE, RESOURCE_EXHAUSTED or INVALID_ARGUMENT",
                  len(results) == 16 and set(codes) <= {"OK", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "INVALID_ARGUMENT"},
                  str(codes) + "\n" + "\n".join(sorted(set(details))))
            print("     " + ", ".join(f"{codes.count(c)} {c}" for c in sorted(set(codes))))
            for d in sorted(set(details)):
                print("     " + d[:160])
            # Which calls win is a race (gRPC refuses streams while its quota is spent, all of
            # them when 16 x 48 MiB arrive at once): the answers given must be right.
            check("every OK answer equals NumPy", all(ok for _, ok in results), str(codes))
            peak, rss = peak_and_rss_mib(server.pid)
            # In flight: 64 MiB of transport; each admitted call holds its tensors once in, once
            # out (one session, no queue: one at a time, and one finishing). Before, every call
            # held its message about twice over: 16 x 96 MiB.
            bound = 64 + 4 * 48 + 64
            check(f"peak memory {peak - idle} MiB over idle, within {bound} MiB (64M in flight + admitted calls)",
                  peak - idle <= bound, f"idle {idle} MiB, peak {peak} MiB, now {rss} MiB")

            channel = grpc.insecure_channel(f"127.0.0.1:{port.group(1)}",
                                            options=[("grpc.max_send_message_length", 256 * MIB),
                                                     ("grpc.max_receive_message_length", 256 * MIB)])
            fn = channel.unary_unary(SERVICE + "ModelInfer", request_serializer=lambda m: m,
                                     response_deserializer=pb.ModelInferResponse.FromString)
            small = pb.ModelInferRequest(model_name="m")
            small.inputs.add(name="x", datatype="FP32", shape=[N])
            small.raw_input_contents.append(data.tobytes())
            try:
                answer = fn(small.SerializeToString(), timeout=120)
                ok = np.array_equal(np.frombuffer(answer.raw_output_contents[0], np.float32), want)
                detail = ""
            except grpc.RpcError as e:
                ok, detail = False, f"{e.code()}: {e.details()}"
            check("afterwards a call is answered, equal to NumPy", ok, detail)
            try:
                fn(message(N, names=("m", "other")), timeout=120)
                code, details = None, ""
            except grpc.RpcError as e:
                code, details = e.code(), e.details()
            check("a message naming model 'm', then 'other': INVALID_ARGUMENT (admitted under one, never run as another)",
                  code == grpc.StatusCode.INVALID_ARGUMENT and "more than once" in details, f"{code}: {details}")
            channel.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
        check("SIGTERM: exit 0", server.returncode == 0, str(server.returncode))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
