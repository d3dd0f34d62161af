"""Benchmark worker: ONNX Runtime (CPU execution provider).

--prepare exports the model once with torch.onnx.export into
DIR/ort/MODEL/model.onnx: the TorchScript exporter (opset 17) first, the
dynamo exporter where it fails; which one worked is kept in exporter.txt.
The session: intra_op_num_threads = N, inter_op_num_threads = 1, sequential
execution, all graph optimizations.  See common.py for the protocol.
"""

import sys

from common import Unsupported, main, one_line, quiet_fds, time_runs


def version():
    import onnxruntime
    return onnxruntime.__version__


def prepare(a, d):
    path = d / "model.onnx"
    if path.exists():
        return
    import torch
    import models
    torch.set_num_threads(a.threads)
    m, x = models.build(a.model), models.inputs(a.model)
    names = models.input_names(a.model)
    errors = []
    for dynamo in (False, True):
        try:
            with torch.no_grad(), quiet_fds():
                if dynamo:
                    torch.onnx.export(m, x, str(path), dynamo=True, input_names=names,
                                      external_data=True)
                else:
                    torch.onnx.export(m, x, str(path), dynamo=False, opset_version=17,
                                      input_names=names)
            (d / "exporter.txt").write_text("dynamo" if dynamo else "torchscript")
            return
        except Exception as e:  # noqa: BLE001 - try the other exporter
            errors.append(f"{'dynamo' if dynamo else 'torchscript'} export: {one_line(e, 150)}")
            for f in d.iterdir():
                f.unlink()
    raise Unsupported("; ".join(errors))


def run(a, d):
    import onnxruntime as ort
    import models
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(d / "model.onnx"), so, providers=["CPUExecutionProvider"])
    x = dict(zip(models.input_names(a.model), (t.numpy() for t in models.inputs(a.model))))
    missing = [i.name for i in sess.get_inputs() if i.name not in x]
    if missing:
        raise Unsupported(f"exported graph wants inputs {missing}")
    feed = {i.name: x[i.name] for i in sess.get_inputs()}
    note = (d / "exporter.txt").read_text() if (d / "exporter.txt").exists() else ""
    return {"times_ms": time_runs(lambda: sess.run(None, feed), a.iters, a.warmup),
            "note": f"{note} exporter"}


if __name__ == "__main__":
    sys.exit(main("ort", version, prepare, run))
