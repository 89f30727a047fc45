#!/usr/bin/python3
"""hexir-serve --model-repository end to end: a folder of models (NAME.hxb and NAME/model.hxb)
loaded at start, a corrupt file reported and skipped (the index says why; the server serves
the rest), the repository extension (index, load, unload, an unknown model 404), a model
replaced by rename while a client sends requests without pause (every request answered 200,
first by the old weights, then by the new), a broken new version leaving the old one serving,
a removed file unloading its model, SIGTERM; and memory budgets (--memory-budget), a model
over its budget refused at load with what it needs.
Usage: repository_test.py --bin BUILD/tools
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from buckets import dense_model  # noqa: E402
from checks import check, summary  # noqa: E402
from serving import request, start  # noqa: E402


X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)


def infer(port, name):
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": X.flatten().tolist()}]})
    status, text = request(port, "POST", f"/v2/models/{name}/infer", body)
    if status != 200:
        return status, None
    return status, np.array(json.loads(text)["outputs"][0]["data"], np.float64)


def expected(w, b):
    return np.maximum(X.astype(np.float64) @ w + b, 0).reshape(-1)


def wait_for(predicate, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    compile_ = os.path.join(tools, "hexir-compile")
    rng = np.random.default_rng(3)
    weights = [(rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
               for _ in range(3)]
    with tempfile.TemporaryDirectory(prefix="hexir-repository-") as tmp:
        os.chdir(tmp)
        for k, (w, b) in enumerate(weights):
            dense_model(f"v{k}.onnx", [1], w, b)
            subprocess.run([compile_, f"v{k}.onnx", "-o", f"v{k}.hxb"], check=True)
        repo = os.path.join(tmp, "models")
        os.makedirs(os.path.join(repo, "beta"))
        shutil.copy("v0.hxb", os.path.join(repo, "alpha.hxb"))
        shutil.copy("v1.hxb", os.path.join(repo, "beta", "model.hxb"))
        with open(os.path.join(repo, "broken.hxb"), "wb") as f:
            f.write(b"HXB0 not an executable at all" * 10)
        with open(os.path.join(repo, "notes.txt"), "w") as f:
            f.write("not a model")
        # (stderr apart: its log is checked at the end.)
        server, port, line = start(tools, "--model-repository", repo, "--repository-poll-s", "0.2", "--threads", "4",
                                   stderr=subprocess.PIPE)
        check("hexir-serve starts with a corrupt file in the repository", port is not None,
              line + (server.stderr.read() if port is None else ""))
        if port is None:
            return 1
        try:
            status, body = request(port, "POST", "/v2/repository/index", "")
            index = {item["name"]: item for item in json.loads(body)} if status == 200 else {}
            check("the index lists alpha and beta READY, broken UNAVAILABLE with its reason, nothing else",
                  set(index) == {"alpha", "beta", "broken"} and index["alpha"]["state"] == "READY" and
                  index["beta"]["state"] == "READY" and index["broken"]["state"] == "UNAVAILABLE" and
                  "broken.hxb" in index["broken"].get("reason", ""), body)
            status, got = infer(port, "alpha")
            check("alpha (alpha.hxb) answers with its weights",
                  status == 200 and np.allclose(got, expected(*weights[0]), atol=1e-4), f"{status} {got}")
            status, got = infer(port, "beta")
            check("beta (beta/model.hxb) answers with its weights",
                  status == 200 and np.allclose(got, expected(*weights[1]), atol=1e-4), f"{status} {got}")
            check("broken is not served", infer(port, "broken")[0] == 404)
            status, body = request(port, "GET", "/v2/health/ready")
            check("strict readiness: /v2/health/ready is 503 naming broken while it serves no version",
                  status == 503 and "broken" in body, f"{status} {body}")

            # Replace alpha by rename while a client sends requests without pause.
            seen, statuses, stop = [], {}, threading.Event()

            def client():
                while not stop.is_set():
                    status, got = infer(port, "alpha")
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200:
                        seen.append(0 if np.allclose(got, expected(*weights[0]), atol=1e-4) else
                                    2 if np.allclose(got, expected(*weights[2]), atol=1e-4) else -1)

            t = threading.Thread(target=client)
            t.start()
            time.sleep(0.5)
            shutil.copy("v2.hxb", os.path.join(repo, ".alpha.hxb.tmp"))
            os.rename(os.path.join(repo, ".alpha.hxb.tmp"), os.path.join(repo, "alpha.hxb"))
            switched = wait_for(lambda: seen and seen[-1] == 2)
            time.sleep(0.3)
            stop.set()
            t.join()
            first_new = seen.index(2) if 2 in seen else len(seen)
            check("alpha replaced by rename under load: every request 200, old weights then new, never mixed",
                  switched and set(statuses) == {200} and -1 not in seen and 0 in seen and
                  all(v == 2 for v in seen[first_new:]), f"statuses {statuses}, answers {seen[:5]}...{seen[-5:]}")
            print(f"     {len(seen)} requests during the swap")

            # A broken new version: reported, the one serving stays.
            with open(os.path.join(repo, ".alpha.hxb.tmp"), "wb") as f:
                f.write(b"\0" * 300)
            os.rename(os.path.join(repo, ".alpha.hxb.tmp"), os.path.join(repo, "alpha.hxb"))
            wait_for(lambda: "reason" in {i["name"]: i for i in json.loads(
                request(port, "POST", "/v2/repository/index", "")[1])}["alpha"], 5)
            status, got = infer(port, "alpha")
            index = {i["name"]: i for i in json.loads(request(port, "POST", "/v2/repository/index", "")[1])}
            check("a broken new alpha is reported and the good one goes on serving",
                  status == 200 and np.allclose(got, expected(*weights[2]), atol=1e-4) and
                  index["alpha"]["state"] == "READY" and "reason" in index["alpha"], json.dumps(index["alpha"]))

            # Overwritten in place (cp onto the file, as a user may): the model serving was read
            # whole at load, so it keeps answering while the file changes under it.
            stop.clear()
            statuses.clear()
            seen.clear()
            t = threading.Thread(target=client)
            t.start()
            time.sleep(0.3)
            with open(os.path.join(repo, "alpha.hxb"), "r+b") as f:
                f.truncate(64)
            time.sleep(0.3)
            shutil.copyfile("v0.hxb", os.path.join(repo, "alpha.hxb"))
            wait_for(lambda: seen and seen[-1] == 0)
            stop.set()
            t.join()
            check("alpha overwritten in place (truncated, then rewritten): the server lives, every request 200, "
                  "then the rewritten weights", set(statuses) == {200} and seen and seen[-1] == 0 and -1 not in seen,
                  f"statuses {statuses}, answers {seen[:3]}...{seen[-3:]}")

            # The repository extension.
            status, body = request(port, "POST", "/v2/repository/models/beta/unload", "")
            check("unload beta: 200, then its requests 404 and the index says UNAVAILABLE",
                  status == 200 and infer(port, "beta")[0] == 404 and
                  {i["name"]: i for i in json.loads(request(port, "POST", "/v2/repository/index", "")[1])}
                  ["beta"]["state"] == "UNAVAILABLE", body)
            time.sleep(0.5)
            check("a poll does not bring an unloaded model back", infer(port, "beta")[0] == 404)
            status, body = request(port, "POST", "/v2/repository/models/beta/load", "")
            status2, got = infer(port, "beta")
            check("load beta: 200, served again", status == 200 and status2 == 200 and
                  np.allclose(got, expected(*weights[1]), atol=1e-4), body)
            status, body = request(port, "POST", "/v2/repository/models/gamma/load", "")
            check("load of a model the folder lacks: 404 naming it", status == 404 and "gamma" in body, body)
            status, body = request(port, "POST", "/v2/repository/models/broken/load", "")
            check("load of the corrupt file: 400 naming the file", status == 400 and "broken.hxb" in body, body)
            status, body = request(port, "POST", "/v2/repository/models/gamma/unload", "")
            check("unload of a model not loaded: 404", status == 404, body)

            # A new file is picked up; a removed one unloads.
            shutil.copy("v1.hxb", os.path.join(repo, "gamma.hxb"))
            check("a new file in the folder is served after a poll", wait_for(lambda: infer(port, "gamma")[0] == 200))
            os.remove(os.path.join(repo, "gamma.hxb"))
            check("a removed file's model is unloaded after a poll",
                  wait_for(lambda: infer(port, "gamma")[0] == 404))
            metrics = request(port, "GET", "/metrics")[1]
            check("/metrics names the repository's models", 'hexir_requests_total{model="alpha"}' in metrics)

            # Files that are no regular file of the folder are refused with the reason, and a model
            # they replace keeps its last good version.
            def index_entry(name):
                status, body = request(port, "POST", "/v2/repository/index", "")
                return next((m for m in json.loads(body) if m["name"] == name), None) if status == 200 else None

            outside = os.path.join(tmp, "outside")
            os.makedirs(outside)
            shutil.copy("v2.hxb", os.path.join(outside, "secret.hxb"))
            os.symlink("../outside/secret.hxb", os.path.join(repo, "leak.hxb"))
            check("a symbolic link out of the folder is refused with the reason in the index",
                  wait_for(lambda: (index_entry("leak") or {}).get("reason", "").find("outside the model repository") >= 0)
                  and infer(port, "leak")[0] == 404, str(index_entry("leak")))
            os.symlink("alpha.hxb", os.path.join(repo, "inside.hxb"))
            check("a symbolic link within the folder serves", wait_for(lambda: infer(port, "inside")[0] == 200))
            good = infer(port, "alpha")[1]
            for what, make in (("a FIFO", lambda path: os.mkfifo(path)),
                               ("a link to /dev/zero", lambda path: os.symlink("/dev/zero", path)),
                               ("a dangling link", lambda path: os.symlink("nowhere.hxb", path)),
                               ("a directory", lambda path: os.makedirs(path))):
                path = os.path.join(repo, "alpha.hxb")
                os.rename(path, os.path.join(tmp, "alpha.saved"))
                make(path)
                ok = wait_for(lambda: bool((index_entry("alpha") or {}).get("reason")))
                status, got = infer(port, "alpha")
                check(f"alpha replaced by {what}: the reason in the index, the last good version serving",
                      ok and status == 200 and np.array_equal(got, good), str(index_entry("alpha")))
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)
                else:
                    os.remove(path)
                os.rename(os.path.join(tmp, "alpha.saved"), path)
            check("alpha put back: loaded again, no reason",
                  wait_for(lambda: "reason" not in (index_entry("alpha") or {"reason": 1})) and infer(port, "alpha")[0] == 200)
            # A sparse 1 GiB file without a header is refused from its first bytes, not read whole.
            with open(os.path.join(repo, "sparse.hxb"), "wb") as f:
                f.truncate(1 << 30)
            t0 = time.monotonic()
            ok = wait_for(lambda: "no .hxb magic" in (index_entry("sparse") or {}).get("reason", ""))
            check(f"a sparse 1 GiB file: refused from its header ({time.monotonic() - t0:.2f} s)", ok,
                  str(index_entry("sparse")))
            os.remove(os.path.join(repo, "sparse.hxb"))
            # The folder unreadable for a moment (a mount gone, descriptors exhausted): unknown, not
            # gone; every model goes on serving, and nothing is unloaded.
            os.rename(repo, repo + ".away")
            time.sleep(1.0)  # five polls
            served = infer(port, "alpha")[0] == 200 and infer(port, "beta")[0] == 200
            os.rename(repo + ".away", repo)
            check("the folder unreadable for 1 s: every model still served", served)
            time.sleep(0.5)
            check("the folder back: still served, no reload needed", infer(port, "alpha")[0] == 200)
        finally:
            server.terminate()
            rc = server.wait(timeout=30)
            log = server.stderr.read()
        check("SIGTERM: exit 0", rc == 0, log[-500:])
        check("the log reports the corrupt file and the swap",
              "model 'broken' not loaded" in log and "model 'alpha' loaded" in log, log[-800:])
        # Relaxed readiness, as Triton's --strict-readiness=false; a repository that is not there.
        with open(os.path.join(repo, "omega.hxb"), "wb") as f:
            f.write(b"not an executable")
        server, port, _ = start(tools, "--model-repository", repo, "--repository-poll-s", "0",
                                "--strict-readiness", "false", stderr=subprocess.PIPE)
        try:
            status, body = request(port, "GET", "/v2/health/ready")
            index = {i["name"]: i for i in json.loads(request(port, "POST", "/v2/repository/index", "")[1])}
            check("--strict-readiness false: ready (200) with omega failed to load",
                  status == 200 and index.get("omega", {}).get("state") == "UNAVAILABLE", f"{status} {body} {index}")
        finally:
            server.terminate()
            server.wait(timeout=30)
            os.remove(os.path.join(repo, "omega.hxb"))
        for bad, why in [(os.path.join(tmp, "nonexistent"), "No such file or directory"),
                         ("v0.hxb", "not a directory")]:
            r = subprocess.run([os.path.join(tools, "hexir-serve"), "--port", "0", "--model-repository", bad],
                               capture_output=True, text=True, timeout=30)
            check(f"--model-repository {os.path.basename(bad)}: refused at start ({why})",
                  r.returncode != 0 and why in r.stderr, r.stderr)
        # Memory budgets: a model over its budget is refused at load, saying what it needs.
        r = subprocess.run([os.path.join(tools, "hexir-serve"), "--port", "0", "--model", "m=v0.hxb",
                            "--memory-budget", "m=100"], capture_output=True, text=True, timeout=30)
        check("--memory-budget m=100: refused at start with its needs and the compiler's plan",
              r.returncode != 0 and "over its memory budget of 100 bytes" in r.stderr and
              "constants 576" in r.stderr and "the compiler's plan of main" in r.stderr and
              "lower bound" in r.stderr, r.stderr)
        server, port, _ = start(tools, "--model-repository", repo, "--repository-poll-s", "0", "--memory-budget", "1K",
                                "--memory-budget", "beta=100", stderr=subprocess.PIPE)
        try:
            index = {i["name"]: i for i in json.loads(request(port, "POST", "/v2/repository/index", "")[1])}
            check("a repository model over its own budget is UNAVAILABLE with the reason; the others, within "
                  "the default budget, serve", index["beta"]["state"] == "UNAVAILABLE" and
                  "memory budget of 100 bytes" in index["beta"].get("reason", "") and
                  index["alpha"]["state"] == "READY", json.dumps(index))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
