#!/usr/bin/python3
"""deploy/kserve/ checked without a cluster: every field of the ServingRuntime and the
InferenceService is one KServe's CRDs define (the schema's property paths, below), the values
KServe constrains are ones it takes, the two manifests agree (runtime name, model format, port),
and the container's args start hexir-serve here: its liveness and readiness probe paths and the
Prometheus path answer 200 on the port the manifest names (the port replaced by a free one).
Usage: kserve_manifests_test.py --bin BUILD/tools
"""
import argparse
import os
import sys
import tempfile
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from checks import check, summary  # noqa: E402
from serving import start  # noqa: E402

# Property paths of KServe's CRDs (kserve/kserve, config/crd/full/, commit aaac4e294: the
# openAPIV3Schema of serving.kserve.io_servingruntimes.yaml v1alpha1 and of
# serving.kserve.io_inferenceservices.yaml v1beta1), for the parts these manifests use: "[]" is
# an array's item, "*" any key of a map. Extend from the CRD when a manifest needs more.
METADATA = ["metadata", "metadata.name", "metadata.namespace", "metadata.annotations", "metadata.annotations.*",
            "metadata.labels", "metadata.labels.*", "apiVersion", "kind"]
SERVING_RUNTIME = METADATA + """spec spec.annotations spec.annotations.* spec.labels spec.labels.* spec.disabled
spec.multiModel spec.protocolVersions spec.protocolVersions[] spec.supportedModelFormats spec.supportedModelFormats[]
spec.supportedModelFormats[].autoSelect spec.supportedModelFormats[].name spec.supportedModelFormats[].priority
spec.supportedModelFormats[].version spec.containers spec.containers[] spec.containers[].name spec.containers[].image
spec.containers[].imagePullPolicy spec.containers[].args spec.containers[].args[] spec.containers[].command
spec.containers[].command[] spec.containers[].env spec.containers[].env[] spec.containers[].env[].name
spec.containers[].env[].value spec.containers[].ports spec.containers[].ports[] spec.containers[].ports[].containerPort
spec.containers[].ports[].name spec.containers[].ports[].protocol spec.containers[].livenessProbe
spec.containers[].livenessProbe.failureThreshold spec.containers[].livenessProbe.httpGet
spec.containers[].livenessProbe.httpGet.path spec.containers[].livenessProbe.httpGet.port
spec.containers[].livenessProbe.initialDelaySeconds spec.containers[].livenessProbe.periodSeconds
spec.containers[].livenessProbe.timeoutSeconds spec.containers[].readinessProbe
spec.containers[].readinessProbe.failureThreshold spec.containers[].readinessProbe.httpGet
spec.containers[].readinessProbe.httpGet.path spec.containers[].readinessProbe.httpGet.port
spec.containers[].readinessProbe.initialDelaySeconds spec.containers[].readinessProbe.periodSeconds
spec.containers[].readinessProbe.timeoutSeconds spec.containers[].resources spec.containers[].resources.limits
spec.containers[].resources.limits.* spec.containers[].resources.requests spec.containers[].resources.requests.*
""".split()
INFERENCE_SERVICE = METADATA + """spec spec.predictor spec.predictor.minReplicas spec.predictor.maxReplicas
spec.predictor.scaleMetric spec.predictor.scaleTarget spec.predictor.model spec.predictor.model.modelFormat
spec.predictor.model.modelFormat.name spec.predictor.model.modelFormat.version spec.predictor.model.runtime
spec.predictor.model.storageUri spec.predictor.model.protocolVersion spec.predictor.model.args
spec.predictor.model.args[] spec.predictor.model.resources spec.predictor.model.resources.limits
spec.predictor.model.resources.limits.* spec.predictor.model.resources.requests
spec.predictor.model.resources.requests.*""".split()
# Maps whose keys are free (annotations, labels, resource names).
FREE_MAPS = ("annotations", "labels", "limits", "requests")
PROTOCOLS = {"v1", "v2", "grpc-v1", "grpc-v2"}  # KServe's protocol versions
SCALE_METRICS = {"cpu", "memory", "concurrency", "rps"}  # the CRD's enum

def field_paths(node, prefix=""):
    """Every field's path in `node`: "[]" for an array's items, "*" for the keys of a free map."""
    if isinstance(node, dict):
        free = prefix.split(".")[-1] in FREE_MAPS
        for key, value in node.items():
            path = f"{prefix}.*" if free else f"{prefix}.{key}" if prefix else key
            yield path
            yield from field_paths(value, path)
    elif isinstance(node, list):
        for item in node:
            yield prefix + "[]"
            yield from field_paths(item, prefix + "[]")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    with open(os.path.join(ROOT, "deploy", "kserve", "servingruntime.yaml")) as f:
        runtime = yaml.safe_load(f)
    with open(os.path.join(ROOT, "deploy", "kserve", "inferenceservice.yaml")) as f:
        service = yaml.safe_load(f)
    for doc, allowed, what in [(runtime, SERVING_RUNTIME, "ServingRuntime"),
                               (service, INFERENCE_SERVICE, "InferenceService")]:
        unknown = sorted(set(field_paths(doc)) - set(allowed))
        check(f"every field of the {what} is one KServe's CRD defines", not unknown, unknown)
    check("kinds and API versions", runtime["apiVersion"] == "serving.kserve.io/v1alpha1" and
          runtime["kind"] == "ServingRuntime" and service["apiVersion"] == "serving.kserve.io/v1beta1" and
          service["kind"] == "InferenceService")
    spec = runtime["spec"]
    protocols = spec.get("protocolVersions", [])
    check("protocol versions KServe knows, v2 among them", "v2" in protocols and set(protocols) <= PROTOCOLS, protocols)
    formats = {f["name"] for f in spec["supportedModelFormats"]}
    model = service["spec"]["predictor"]["model"]
    check("the InferenceService names this runtime and a format it supports",
          model["runtime"] == runtime["metadata"]["name"] and model["modelFormat"]["name"] in formats)
    check("scaleMetric is one of the CRD's", service["spec"]["predictor"].get("scaleMetric", "cpu") in SCALE_METRICS)
    container = spec["containers"][0]
    args = container["args"]
    port = int(args[args.index("--port") + 1])
    check("the container port, the probes' port and the Prometheus annotation are the server's --port",
          container["ports"][0]["containerPort"] == port and
          container["livenessProbe"]["httpGet"]["port"] == port and
          container["readinessProbe"]["httpGet"]["port"] == port and
          int(spec["annotations"]["prometheus.kserve.io/port"]) == port)
    check("one container port (Knative rejects more), REST's, named http1",
          len(container["ports"]) == 1 and container["ports"][0]["name"] == "http1", container["ports"])
    check("the model folder is where KServe mounts models",
          args[args.index("--model-repository") + 1] == "/mnt/models")
    # The args start the server (a free port, a folder of our own); the probe and metrics paths answer.
    with tempfile.TemporaryDirectory(prefix="hexir-kserve-") as tmp:
        run_args = list(args)
        run_args[run_args.index("--port") + 1] = "0"
        run_args[run_args.index("--host") + 1] = "127.0.0.1"
        run_args[run_args.index("--model-repository") + 1] = tmp
        if "--grpc-port" in run_args:
            run_args[run_args.index("--grpc-port") + 1] = "0"
        # (start() adds "--port 0" before them; the manifest's own port is replaced by 0 too.)
        server, port, line = start(tools, *run_args)
        check("hexir-serve starts with the manifest's args", port is not None, line)
        if port is not None:
            try:
                for path in (container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"],
                             spec["annotations"]["prometheus.kserve.io/path"]):
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                        check(f"GET {path}: 200", r.status == 200)
            finally:
                server.terminate()
                server.wait(timeout=30)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
