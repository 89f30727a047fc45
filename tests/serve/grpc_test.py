#!/usr/bin/python3
"""hexir-serve --grpc-port end to end, from Python's grpcio (Debian's python3-grpcio) with message
classes protoc generates here from serve/grpc_service.proto: ServerLive, ServerReady, ModelReady,
ServerMetadata, ModelMetadata, and ModelInfer with raw_input_contents and with typed contents,
equal to hexir-run's answers; the same model batched (-1 in its metadata, rows from 1 to the
maximum); the errors a client checks (NOT_FOUND, INVALID_ARGUMENT with REST's messages,
RESOURCE_EXHAUSTED for a message over --grpc-max-message); bytes that are no protobuf message;
and, after all that, the server still answering, REST and gRPC alike, and exiting 0 on SIGTERM.
Usage: grpc_test.py --bin BUILD/tools
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from buckets import dense_model  # noqa: E402
from checks import check, summary  # noqa: E402
from serving import grpc_messages, request  # noqa: E402

SERVICE = "/inference.GRPCInferenceService/"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    import grpc
    with tempfile.TemporaryDirectory(prefix="hexir-grpc-") as tmp:
        pb = grpc_messages(ROOT, tmp)
        rng = np.random.default_rng(7)
        w, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        dense_model(os.path.join(tmp, "dense.onnx"), ["batch"], w, b)
        compile_ = os.path.join(tools, "hexir-compile")
        subprocess.run([compile_, os.path.join(tmp, "dense.onnx"), "-o", os.path.join(tmp, "one.hxb"), "--dim",
                        "batch=1"], check=True)
        subprocess.run([compile_, os.path.join(tmp, "dense.onnx"), "-o", os.path.join(tmp, "batch.hxb"), "--dim",
                        "batch=1,4"], check=True)
        x = rng.standard_normal((1, 16)).astype(np.float32)
        np.save(os.path.join(tmp, "x.npy"), x)
        subprocess.run([os.path.join(tools, "hexir-run"), os.path.join(tmp, "one.hxb"), "--input",
                        f"x={tmp}/x.npy", "--output", f"y={tmp}/y.npy"], check=True, capture_output=True)
        want = np.load(os.path.join(tmp, "y.npy"))

        server = subprocess.Popen([os.path.join(tools, "hexir-serve"), "--port", "0", "--grpc-port", "0",
                                   "--grpc-max-message", "1M", "--model", f"m={tmp}/one.hxb", "--model",
                                   f"b={tmp}/batch.hxb", "--max-batch", "b=4"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        grpc_line, http_line = server.stdout.readline(), server.stdout.readline()
        g = re.search(r"gRPC listening on 127.0.0.1:(\d+)", grpc_line)
        h = re.search(r"listening on 127.0.0.1:(\d+)", http_line)
        check("hexir-serve --grpc-port 0 prints its gRPC port, then its HTTP one", g is not None and h is not None,
              grpc_line + http_line)
        if not (g and h):
            server.kill()
            return 1
        channel = grpc.insecure_channel(f"127.0.0.1:{g.group(1)}")

        def call(method, message, response_type, raw=None):
            fn = channel.unary_unary(SERVICE + method, request_serializer=lambda m: m if raw else m.SerializeToString(),
                                     response_deserializer=response_type.FromString)
            return fn(raw if raw is not None else message, timeout=30)

        def error_of(method, message, response_type, raw=None):
            try:
                call(method, message, response_type, raw)
                return None, ""
            except grpc.RpcError as e:
                return e.code(), e.details()

        try:
            check("ServerLive, ServerReady", call("ServerLive", pb.ServerLiveRequest(), pb.ServerLiveResponse).live and
                  call("ServerReady", pb.ServerReadyRequest(), pb.ServerReadyResponse).ready)
            check("ModelReady: m yes, nope no",
                  call("ModelReady", pb.ModelReadyRequest(name="m"), pb.ModelReadyResponse).ready and
                  not call("ModelReady", pb.ModelReadyRequest(name="nope"), pb.ModelReadyResponse).ready)
            meta = call("ServerMetadata", pb.ServerMetadataRequest(), pb.ServerMetadataResponse)
            check("ServerMetadata names the server", meta.name == "hexir-serve", str(meta))
            mm = call("ModelMetadata", pb.ModelMetadataRequest(name="m"), pb.ModelMetadataResponse)
            check("ModelMetadata: inputs and outputs with type and shape",
                  [(t.name, t.datatype, list(t.shape)) for t in mm.inputs] == [("x", "FP32", [1, 16])] and
                  [(t.name, t.datatype, list(t.shape)) for t in mm.outputs] == [("y", "FP32", [1, 8])], str(mm))
            bm = call("ModelMetadata", pb.ModelMetadataRequest(name="b"), pb.ModelMetadataResponse)
            check("a batched model's metadata shows -1", list(bm.inputs[0].shape) == [-1, 16], str(bm))

            def infer_request(model, arr, raw=True, **fields):
                r = pb.ModelInferRequest(model_name=model, id="req-1", **fields)
                t = r.inputs.add(name="x", datatype="FP32", shape=list(arr.shape))
                if raw:
                    r.raw_input_contents.append(arr.tobytes())
                else:
                    t.contents.fp32_contents.extend(arr.flatten().tolist())
                return r

            out = call("ModelInfer", infer_request("m", x), pb.ModelInferResponse)
            got = np.frombuffer(out.raw_output_contents[0], np.float32).reshape(list(out.outputs[0].shape))
            check("ModelInfer with raw_input_contents: raw_output_contents equal to hexir-run's, the id echoed",
                  out.id == "req-1" and out.outputs[0].datatype == "FP32" and np.array_equal(got, want), str(out)[:300])
            out = call("ModelInfer", infer_request("m", x, raw=False), pb.ModelInferResponse)
            got = np.frombuffer(out.raw_output_contents[0], np.float32).reshape(1, 8)
            check("ModelInfer with fp32_contents: the same answer", np.array_equal(got, want))
            xs = rng.standard_normal((3, 16)).astype(np.float32)
            out = call("ModelInfer", infer_request("b", xs), pb.ModelInferResponse)
            got = np.frombuffer(out.raw_output_contents[0], np.float32).reshape(list(out.outputs[0].shape))
            check("a batched model takes 3 rows and answers 3, equal to NumPy's",
                  list(out.outputs[0].shape) == [3, 8] and
                  np.allclose(got, np.maximum(xs.astype(np.float64) @ w + b, 0), atol=1e-4), str(out.outputs[0]))

            cases = [
                ("an unknown model: NOT_FOUND", infer_request("nope", x), grpc.StatusCode.NOT_FOUND, "no model 'nope'"),
                ("a wrong shape: INVALID_ARGUMENT naming it", infer_request("m", np.zeros((1, 15), np.float32)),
                 grpc.StatusCode.INVALID_ARGUMENT, "must have shape [1,16], got [1,15]"),
                ("5 rows for a maximum of 4", infer_request("b", np.zeros((5, 16), np.float32)),
                 grpc.StatusCode.INVALID_ARGUMENT, "takes 1 to 4"),
                ("raw bytes one short", pb.ModelInferRequest(model_name="m", inputs=[pb.ModelInferRequest.InferInputTensor(
                    name="x", datatype="FP32", shape=[1, 16])], raw_input_contents=[b"\0" * 63]),
                 grpc.StatusCode.INVALID_ARGUMENT, "has 63 bytes of raw_input_contents; its tensor takes 64"),
                ("too few fp32_contents", infer_request("m", x[:, :8].reshape(1, 8), raw=False),
                 grpc.StatusCode.INVALID_ARGUMENT, "must have shape"),
                ("a wrong datatype", pb.ModelInferRequest(model_name="m", inputs=[pb.ModelInferRequest.InferInputTensor(
                    name="x", datatype="INT64", shape=[1, 16])], raw_input_contents=[b"\0" * 128]),
                 grpc.StatusCode.INVALID_ARGUMENT, "must have datatype FP32"),
                ("a missing input", pb.ModelInferRequest(model_name="m"), grpc.StatusCode.INVALID_ARGUMENT,
                 "input 'x' is missing"),
                ("a 300,000-character model name: NOT_FOUND, echoed cut short", infer_request("n" * 300000, x),
                 grpc.StatusCode.NOT_FOUND, "n" * 100 + "... (300000 bytes)'"),
                ("an unknown output", infer_request("m", x, outputs=[pb.ModelInferRequest.InferRequestedOutputTensor(
                    name="z")]), grpc.StatusCode.INVALID_ARGUMENT, "has no output 'z'"),
                ("an output requested 40 times (an amplified answer)", infer_request(
                    "m", x, outputs=[pb.ModelInferRequest.InferRequestedOutputTensor(name="y")] * 40),
                 grpc.StatusCode.INVALID_ARGUMENT, "output 'y' is requested more than once"),
                ("a message over --grpc-max-message 1M: RESOURCE_EXHAUSTED",
                 pb.ModelInferRequest(model_name="m", raw_input_contents=[b"\0" * (2 << 20)]),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, ""),
            ]
            for what, message, code, text in cases:
                got_code, details = error_of("ModelInfer", message, pb.ModelInferResponse)
                check(what, got_code == code and text in details, f"{got_code}: {details}")
            garbage = b"\xff\xff\xff\xff\x0f" + os.urandom(64)
            got_code, details = error_of("ModelInfer", None, pb.ModelInferResponse, raw=garbage)
            check("bytes that are no protobuf message: refused (INTERNAL or INVALID_ARGUMENT), no crash",
                  got_code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT), f"{got_code}: {details}")
            out = call("ModelInfer", infer_request("m", x), pb.ModelInferResponse)
            check("after the bad calls, gRPC and REST still answer",
                  np.array_equal(np.frombuffer(out.raw_output_contents[0], np.float32).reshape(1, 8), want) and
                  request(int(h.group(1)), "GET", "/v2/health/ready")[0] == 200)
            metrics = request(int(h.group(1)), "GET", "/metrics")[1]
            count = int(re.search(r'hexir_requests_total\{model="m"\} (\d+)', metrics).group(1))
            # The 10 calls that reached model m (NOT_FOUND, oversized and garbage ones never did).
            check("gRPC calls count in /metrics", count == 10, f"{count}")
        finally:
            channel.close()
            server.terminate()
            rc = server.wait(timeout=30)
        check("SIGTERM: exit 0", rc == 0, server.stdout.read()[-500:])

        # An IPv6 host: gRPC's address needs brackets ("[::1]:0"), which --host ::1 gave without.
        import socket
        try:
            socket.socket(socket.AF_INET6).bind(("::1", 0))
            ipv6 = True
        except OSError:
            ipv6 = False
        if ipv6:
            server = subprocess.Popen([os.path.join(tools, "hexir-serve"), "--host", "::1", "--port", "0",
                                       "--grpc-port", "0", "--model", f"m={tmp}/one.hxb"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            lines = server.stdout.readline() + server.stdout.readline()
            g = re.search(r"gRPC listening on ::1:(\d+)", lines)
            ok = False
            if g:
                with grpc.insecure_channel(f"[::1]:{g.group(1)}") as v6:
                    live = v6.unary_unary(SERVICE + "ServerLive", request_serializer=lambda m: m.SerializeToString(),
                                          response_deserializer=pb.ServerLiveResponse.FromString)
                    ok = live(pb.ServerLiveRequest(), timeout=30).live
            server.terminate()
            server.wait(timeout=30)
            check("--host ::1 --grpc-port 0: gRPC listens on [::1] and answers", ok, lines)
        else:
            print("skip --host ::1: no IPv6 loopback here")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
