"""Benchmark worker: OpenVINO (the `openvino` package from PyPI), CPU plugin.

--prepare converts the model once into DIR/openvino/MODEL/model.xml (fp32
weights, not compressed): ov.convert_model on the module with the example
inputs (TorchScript tracing), or, where that fails, on
torch.export.export's ExportedProgram; conversion.txt says which.  A timed
run compiles it for CPU with INFERENCE_PRECISION_HINT f32, PERFORMANCE_HINT
LATENCY and INFERENCE_NUM_THREADS N (compile time not counted).  See common.py.
"""

import sys

from common import Unsupported, main, one_line, quiet_fds, time_runs


def version():
    import openvino
    return openvino.__version__.split("-")[0]


def prepare(a, d):
    if (d / "model.xml").exists():
        return
    import openvino as ov
    import torch
    import models
    torch.set_num_threads(a.threads)
    m, x = models.build(a.model), models.inputs(a.model)
    errors = []
    for how in ("traced", "torch.export"):
        try:
            with torch.no_grad(), quiet_fds():
                if how == "traced":
                    om = ov.convert_model(m, example_input=x)
                else:
                    om = ov.convert_model(torch.export.export(m, x))
            ov.save_model(om, str(d / "model.xml"), compress_to_fp16=False)
            (d / "conversion.txt").write_text(how)
            return
        except Exception as e:  # noqa: BLE001 - try the other front end
            errors.append(f"{how} conversion: {one_line(e, 150)}")
    raise Unsupported("; ".join(errors))


def run(a, d):
    import openvino as ov
    import models
    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY",
           "INFERENCE_NUM_THREADS": a.threads}
    cm = core.compile_model(str(d / "model.xml"), "CPU", cfg)
    if len(cm.inputs) != len(models.inputs(a.model)):
        raise Unsupported(f"converted model has {len(cm.inputs)} inputs")
    req = cm.create_infer_request()
    x = [t.numpy() for t in models.inputs(a.model)]
    note = (d / "conversion.txt").read_text() if (d / "conversion.txt").exists() else ""
    return {"times_ms": time_runs(lambda: req.infer(x), a.iters, a.warmup), "note": note}


if __name__ == "__main__":
    sys.exit(main("openvino", version, prepare, run))
