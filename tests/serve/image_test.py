#!/usr/bin/python3
"""scripts/build-image.sh end to end, where buildah is installed: the image holds nothing but
hexir-serve, the shared objects it loads (its runtime, the C library, gRPC's) and the models; its configuration
serves /mnt/models on port 8080 and stops on SIGTERM. The image then runs: with podman where the
machine lets a container run, else (a sandbox whose kernel refuses the OCI runtime: this one's
crun cannot set rlimits or use its hybrid cgroups) its files run under chroot, which still shows
the image is complete: ready within a second, an inference equal to hexir-run's, SIGTERM exit 0.
Usage: image_test.py --bin BUILD/tools
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from buckets import dense_model  # noqa: E402
from checks import check, summary  # noqa: E402

TAG = "localhost/hexir-serve:image-test"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode() if body else None,
                                 method="POST" if body else "GET", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read().decode()


def wait_ready(port, seconds):
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            if get(port, "/v2/health/ready")[0] == 200:
                return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.01)
    return None


def serve_checks(port, started, ref, x, label):
    ready = wait_ready(port, 10)
    check(f"{label}: /v2/health/ready within 1 s", ready is not None and time.monotonic() - started < 1.0 + 0.5,
          f"ready after {ready}")
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": x.flatten().tolist()}]})
    status, text = get(port, "/v2/models/dense/infer", body)
    got = np.array(json.loads(text)["outputs"][0]["data"], np.float32) if status == 200 else None
    check(f"{label}: an inference equal to hexir-run's", got is not None and np.array_equal(got, ref.reshape(-1)), text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    with tempfile.TemporaryDirectory(prefix="hexir-image-") as tmp:
        models = os.path.join(tmp, "models")
        os.makedirs(models)
        rng = np.random.default_rng(5)
        w, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        dense_model(os.path.join(tmp, "dense.onnx"), [1], w, b)
        subprocess.run([os.path.join(tools, "hexir-compile"), os.path.join(tmp, "dense.onnx"), "-o",
                        os.path.join(models, "dense.hxb")], check=True)
        x = rng.standard_normal((1, 16)).astype(np.float32)
        np.save(os.path.join(tmp, "x.npy"), x)
        subprocess.run([os.path.join(tools, "hexir-run"), os.path.join(models, "dense.hxb"), "--input",
                        f"x={tmp}/x.npy", "--output", f"y={tmp}/y.npy"], check=True, capture_output=True)
        ref = np.load(os.path.join(tmp, "y.npy"))
        r = subprocess.run([os.path.join(ROOT, "scripts", "build-image.sh"), "--tag", TAG, "--models", models],
                           capture_output=True, text=True)
        check("scripts/build-image.sh builds the image", r.returncode == 0, r.stderr[-1000:])
        if r.returncode != 0:
            return 1
        config = json.loads(subprocess.run(["buildah", "inspect", "--type", "image", TAG], capture_output=True,
                                           text=True, check=True).stdout)["OCIv1"]["config"]
        check("the image runs hexir-serve on /mnt/models, port 8080, stopping on SIGTERM",
              config.get("Entrypoint") == ["/usr/bin/hexir-serve"] and "/mnt/models" in config.get("Cmd", []) and
              {"8080", "8080/tcp"} & set(config.get("ExposedPorts", {})) and config.get("StopSignal") == "SIGTERM",
              config)
        ctr = subprocess.run(["buildah", "from", TAG], capture_output=True, text=True, check=True).stdout.strip()
        mnt = subprocess.run(["buildah", "mount", ctr], capture_output=True, text=True, check=True).stdout.strip()
        proc_mounted = False
        try:
            files = sorted(os.path.relpath(os.path.join(d, f), mnt) for d, _, fs in os.walk(mnt) for f in fs)
            # Besides the server and the models, only shared objects in library folders (the
            # runtime, the C library, gRPC's): no shell, no other program, no package manager.
            def shared_object(f):
                with open(os.path.join(mnt, f), "rb") as fh:
                    elf = fh.read(4) == b"\x7fELF"
                return elf and ".so" in os.path.basename(f) and f.split("/")[0] in ("lib", "lib64", "usr")
            extra = [f for f in files if f not in ("usr/bin/hexir-serve", "mnt/models/dense.hxb") and
                     not shared_object(f)]
            check("the image holds the server, the shared objects it loads and the models, nothing else",
                  not extra and "usr/bin/hexir-serve" in files and
                  any(f.startswith("usr/lib/hexir/libhexir_runtime.so") for f in files), f"also {extra}")
            size = sum(os.path.getsize(os.path.join(mnt, f)) for f in files)
            print(f"     {len(files)} files, {size / 2**20:.1f} MiB: the server, "
                  f"{sum(1 for f in files if '.so' in f)} shared objects, the model")
            port = free_port()
            podman = shutil.which("podman")
            ran_container = False
            if podman:
                started = time.monotonic()
                r = subprocess.run([podman, "run", "-d", "-p", f"127.0.0.1:{port}:8080", TAG], capture_output=True,
                                   text=True)
                if r.returncode == 0:
                    cid = r.stdout.strip()
                    ran_container = True
                    try:
                        serve_checks(port, started, ref, x, "podman run")
                    finally:
                        stop = subprocess.run([podman, "stop", "-t", "10", cid], capture_output=True, text=True)
                        code = subprocess.run([podman, "inspect", "-f", "{{.State.ExitCode}}", cid],
                                              capture_output=True, text=True).stdout.strip()
                        subprocess.run([podman, "rm", cid], capture_output=True)
                    check("podman stop (SIGTERM): exit 0", stop.returncode == 0 and code == "0", code)
                else:
                    print(f"     podman cannot run a container here: {r.stderr.strip().splitlines()[-1]}")
            if not ran_container:
                os.makedirs(os.path.join(mnt, "proc"), exist_ok=True)
                subprocess.run(["mount", "-t", "proc", "proc", os.path.join(mnt, "proc")], check=True)
                proc_mounted = True
                env = {"LD_LIBRARY_PATH": "/usr/lib/hexir"}
                started = time.monotonic()
                server = subprocess.Popen([shutil.which("chroot") or "/usr/sbin/chroot", mnt, *config["Entrypoint"], *[
                    "127.0.0.1" if a == "0.0.0.0" else str(port) if a == "8080" else "0" if a == "8081" else a
                    for a in config["Cmd"]]],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                try:
                    serve_checks(port, started, ref, x, "the image's files under chroot")
                finally:
                    server.send_signal(15)
                    code = server.wait(timeout=30)
                check("SIGTERM: exit 0", code == 0, server.stdout.read())
        finally:
            if proc_mounted:
                subprocess.run(["umount", os.path.join(mnt, "proc")])
            subprocess.run(["buildah", "umount", ctr], capture_output=True)
            subprocess.run(["buildah", "rm", ctr], capture_output=True)
            subprocess.run(["buildah", "rmi", TAG], capture_output=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
