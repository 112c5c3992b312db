"""Everyday OpenVINO idioms, each a function written only against the module it is given
(``ov`` is ``openvino`` or ``irexec``), so that the very same script runs on both.

Each takes ``(ov, paths, tmp)`` (``paths``: the models of tests/api/models.py by name; ``tmp``: a
folder of its own) and returns a dict of what a script would look at: arrays, names, numbers.
``EXPECTED[name](paths)`` gives the same dict (or some of its keys) computed independently with
numpy, for runs without OpenVINO.
"""

from __future__ import annotations

import numpy as np

from tests.api import models

CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}  # OpenVINO as the oracle: f32 throughout
IMAGES = [np.random.default_rng(i).standard_normal((1, 3, 4, 4)).astype(np.float32)
          for i in range(4)]
A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)

IDIOMS = {}
EXPECTED = {}


def idiom(fn):
    IDIOMS[fn.__name__] = fn
    return fn


def expected(name):
    def register(fn):
        EXPECTED[name] = fn
        return fn
    return register


def _ref(x):
    return models.classifier_reference(x)


# --- classification -----------------------------------------------------------------------------

@idiom
def classification_loop(ov, paths, tmp):
    core = ov.Core()
    model = core.read_model(str(paths["classifier"]))
    compiled = core.compile_model(model, "CPU", CONFIG)
    output = compiled.output(0)
    tops, probs = [], []
    for image in IMAGES:
        result = compiled(image)[output]
        tops.append(int(np.argmax(result)))
        probs.append(result)
    return {"tops": tops, "probs": np.concatenate(probs)}


@expected("classification_loop")
def _(paths):
    probs = np.concatenate([_ref(x) for x in IMAGES])
    return {"tops": [int(np.argmax(p)) for p in probs], "probs": probs}


@idiom
def results_every_way(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["two_inputs"]), "CPU", CONFIG)
    results = compiled({"a": A, "b": B})
    by_port = results[compiled.output(1)]
    names = [port.get_any_name() for port, _ in results.items()]
    first, second = results.to_tuple()
    return {"names": names, "by_index": results[0], "by_name": results["prod"],
            "by_port": by_port, "tuple": np.stack([first, second]),
            "name_sets": [sorted(s) for s in results.names()], "len": len(results),
            "keys_are_ports": [k.get_any_name() for k in results.keys()],
            "dict": [v for v in results.to_dict().values()][1]}


@expected("results_every_way")
def _(paths):
    total, prod = A + 2 * B, A * B
    return {"names": ["sum", "prod"], "by_index": total, "by_name": prod, "by_port": prod,
            "tuple": np.stack([total, prod]), "name_sets": [["sum"], ["prod"]], "len": 2,
            "keys_are_ports": ["sum", "prod"], "dict": prod}


@idiom
def inputs_every_way(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["two_inputs"]), "CPU", CONFIG)
    out = {
        "list": compiled([A, B])[0],
        "tuple": compiled((A, B))[0],
        "by_index": compiled({0: A, 1: B})[0],
        "by_port": compiled({compiled.input(0): A, compiled.input(1): B})[0],
        "by_name": compiled({"a": A, "b": B})[0],
        "tensors": compiled({"a": ov.Tensor(A), "b": ov.Tensor(B)})[0],
        "float64": compiled({"a": A.astype(np.float64), "b": B.astype(np.float64)})[0],
        "ints": compiled({"a": A.astype(np.int64), "b": np.zeros((2, 3), np.int32)})[0],
    }
    single = ov.compile_model(str(paths["classifier"]), "CPU", CONFIG)
    out["single_array"] = single(IMAGES[0])[0]
    out["single_tensor"] = single(ov.Tensor(IMAGES[1]))[0]
    out["single_f64"] = single(IMAGES[2].astype(np.float64))[0]
    return out


@expected("inputs_every_way")
def _(paths):
    total = A + 2 * B
    return {"list": total, "tuple": total, "by_index": total, "by_port": total,
            "by_name": total, "tensors": total, "float64": total, "ints": A,
            "single_array": _ref(IMAGES[0]),
            "single_tensor": _ref(IMAGES[1]), "single_f64": _ref(IMAGES[2])}


# --- requests -----------------------------------------------------------------------------------

@idiom
def request_tensors(ov, paths, tmp):
    compiled = ov.Core().compile_model(str(paths["two_inputs"]), "CPU", CONFIG)
    request = compiled.create_infer_request()
    request.get_input_tensor(0).data[:] = A
    request.get_tensor("b").data[:] = B
    request.infer()
    first = request.get_output_tensor(0).data.copy()
    request.set_tensor(compiled.input(1), ov.Tensor(A))
    request.set_input_tensor(0, ov.Tensor(B))
    request.infer()
    second = request.get_tensor("prod").data.copy()
    shapes = [list(t.shape) for t in request.input_tensors]
    request.infer({0: A, "b": B}, share_inputs=True, share_outputs=True)
    third = request.results["sum"].copy()
    return {"first": first, "second": second, "third": third, "shapes": shapes,
            "outputs": len(request.output_tensors),
            "model_inputs": [p.get_any_name() for p in request.model_inputs],
            "latency_is_number": isinstance(request.latency, float)}


@expected("request_tensors")
def _(paths):
    return {"first": A + 2 * B, "second": B * A, "third": A + 2 * B,
            "shapes": [[2, 3], [2, 3]], "outputs": 2, "model_inputs": ["a", "b"],
            "latency_is_number": True}


@idiom
def request_async_callback(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["classifier"]), "CPU", CONFIG)
    request = compiled.create_infer_request()
    seen = []
    request.set_callback(lambda userdata: seen.append(userdata), "first")
    request.start_async({0: IMAGES[0]}, "run-1")
    request.wait()
    result = request.get_output_tensor().data.copy()
    request.start_async(IMAGES[1])
    finished = request.wait_for(10_000)
    return {"seen": seen[:1], "result": result, "finished": finished,
            "second": request.results[0].copy(),
            "new_request": compiled.infer_new_request({0: IMAGES[2]})[0]}


@expected("request_async_callback")
def _(paths):
    return {"seen": ["run-1"], "result": _ref(IMAGES[0]), "finished": True,
            "second": _ref(IMAGES[1]), "new_request": _ref(IMAGES[2])}


@idiom
def async_queue(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["classifier"]), "CPU", CONFIG)
    queue = ov.AsyncInferQueue(compiled, 2)
    collected = {}

    def done(request, userdata):
        collected[userdata] = request.get_output_tensor(0).data.copy()

    queue.set_callback(done)
    for i, image in enumerate(IMAGES * 2):
        queue.start_async({0: image}, i)
    queue.wait_all()
    return {"jobs": len(queue), "ready": queue.is_ready(), "requests": len(list(queue)),
            "results": np.concatenate([collected[i] for i in range(len(IMAGES) * 2)])}


@expected("async_queue")
def _(paths):
    return {"jobs": 2, "ready": True, "requests": 2,
            "results": np.concatenate([_ref(x) for x in IMAGES * 2])}


# --- shapes -------------------------------------------------------------------------------------

@idiom
def reshape_every_way(ov, paths, tmp):
    core = ov.Core()
    out = {}
    forms = {"list": lambda m: [2, 3, 4, 4], "text": lambda m: "2,3,4,4",
             "partial_shape": lambda m: ov.PartialShape([2, 3, 4, 4]),
             "dict_by_name": lambda m: {"image": [2, 3, 4, 4]},
             "dict_by_index": lambda m: {0: ov.PartialShape("2,3,4,4")},
             "dict_by_port": lambda m: {m.input(0): "[2,3,4,4]"}}
    batch = np.concatenate(IMAGES[:2])
    for name, form in forms.items():
        model = core.read_model(str(paths["classifier"]))
        model.reshape(form(model))
        out[name] = core.compile_model(model, "CPU", CONFIG)(batch)[0]
        out[name + "_shape"] = str(model.output(0).get_partial_shape())
    return out


@expected("reshape_every_way")
def _(paths):
    want = _ref(np.concatenate(IMAGES[:2]))
    out = {}
    for name in ("list", "text", "partial_shape", "dict_by_name", "dict_by_index",
                 "dict_by_port"):
        out[name], out[name + "_shape"] = want, "[2,5]"
    return out


@idiom
def dynamic_batch(ov, paths, tmp):
    core = ov.Core()
    model = core.read_model(str(paths["classifier"]))
    model.reshape({model.input(0).get_any_name(): ov.PartialShape([-1, 3, 4, 4])})
    shape = model.input(0).get_partial_shape()
    compiled = core.compile_model(model, "CPU", CONFIG)
    request = compiled.create_infer_request()
    one = request.infer({0: IMAGES[0]})[0].copy()
    four = request.infer({0: np.concatenate(IMAGES)})[0].copy()
    filled = compiled.create_infer_request()
    tensor = filled.get_input_tensor()
    empty = list(tensor.shape)
    tensor.shape = [2, 3, 4, 4]
    tensor.data[:] = np.concatenate(IMAGES[2:])
    filled.infer()
    return {"empty": empty, "filled": filled.get_output_tensor().data.copy(),
            "shape": str(shape), "dynamic": shape.is_dynamic, "static": shape.is_static,
            "batch_dim": str(shape[0]), "min": list(shape.get_min_shape())[1:],
            "out_shape": str(compiled.output(0).get_partial_shape()), "one": one,
            "four": four, "model_dynamic": model.is_dynamic()}


@expected("dynamic_batch")
def _(paths):
    return {"empty": [0, 3, 4, 4], "filled": _ref(np.concatenate(IMAGES[2:])),
            "shape": "[?,3,4,4]", "dynamic": True, "static": False, "batch_dim": "?",
            "min": [3, 4, 4], "out_shape": "[?,5]", "one": _ref(IMAGES[0]),
            "four": _ref(np.concatenate(IMAGES)), "model_dynamic": True}


@idiom
def shapes_and_types(ov, paths, tmp):
    shape = ov.PartialShape("?,3,224,1..8")
    dim = ov.Dimension(1, 8)
    static = ov.PartialShape([1, 3, 224, 224])
    return {"text": str(shape), "rank": shape.rank.get_length(), "dynamic": shape.is_dynamic,
            "min": list(shape.get_min_shape()), "max_last": list(shape.get_max_shape())[3],
            "dim": str(dim), "dim_bounds": [dim.get_min_length(), dim.get_max_length()],
            "dim_static": ov.Dimension(5).is_static, "dim_text": str(ov.Dimension("2..")),
            "to_shape": list(static.to_shape()), "compatible": shape.compatible(
                ov.PartialShape([2, 3, 224, 4])),
            "not_compatible": shape.compatible(ov.PartialShape([2, 4, 224, 4])),
            "minus_one": str(ov.PartialShape("-1,3")),
            "f32_dtype": str(ov.Type.f32.to_dtype()), "f32_size": ov.Type.f32.get_size(),
            "i8_real": ov.Type.i8.is_real(), "f16_real": ov.Type.f16.is_real(),
            "type_of_dtype": ov.Type(np.float32).get_type_name(),
            "type_names": [t.get_type_name() for t in (ov.Type.u8, ov.Type.boolean,
                                                       ov.Type.f64, ov.Type.i64)],
            "bitwidth": ov.Type.u4.bitwidth, "shape": str(ov.Shape([1, 2, 3]))}


@expected("shapes_and_types")
def _(paths):
    return {"text": "[?,3,224,1..8]", "rank": 4, "dynamic": True, "min": [0, 3, 224, 1],
            "max_last": 8, "dim": "1..8", "dim_bounds": [1, 8], "dim_static": True,
            "dim_text": "2..", "to_shape": [1, 3, 224, 224], "compatible": True,
            "not_compatible": False, "minus_one": "[?,3]", "f32_dtype": "float32",
            "f32_size": 4, "i8_real": False, "f16_real": True, "type_of_dtype": "f32",
            "type_names": ["u8", "boolean", "f64", "i64"], "bitwidth": 4, "shape": "[1,2,3]"}


@idiom
def layouts(ov, paths, tmp):
    model = ov.Core().read_model(str(paths["classifier"]))
    ov.layout_helpers.set_layout(model.input(0), ov.Layout("NCHW"))
    layout = ov.layout_helpers.get_layout(model.input(0))
    batch = ov.get_batch(model)
    ov.set_batch(model, 3)
    ov.save_model(model, str(tmp / "with_layout.xml"), compress_to_fp16=False)
    again = ov.Core().read_model(str(tmp / "with_layout.xml"))
    return {"layout": str(layout), "batch": str(batch),
            "channels": ov.layout_helpers.channels_idx(layout),
            "height": ov.layout_helpers.height_idx(ov.Layout("NHWC")),
            "has_depth": ov.layout_helpers.has_depth(layout),
            "reshaped": str(model.input(0).get_partial_shape()),
            "saved_layout": str(ov.layout_helpers.get_layout(again.input(0))),
            "empty": ov.Layout().empty, "index_of_w": ov.Layout("NCHW").get_index_by_name("W")}


@expected("layouts")
def _(paths):
    return {"layout": "[N,C,H,W]", "batch": "1", "channels": 1, "height": 1,
            "has_depth": False, "reshaped": "[3,3,4,4]", "saved_layout": "[N,C,H,W]",
            "empty": True, "index_of_w": 3}


# --- the model ----------------------------------------------------------------------------------

@idiom
def model_inspection(ov, paths, tmp):
    model = ov.Core().read_model(str(paths["classifier"]))
    ops = model.get_ordered_ops()
    weights = next(op for op in ops if op.get_friendly_name() == "conv_weights")
    conv = next(op for op in ops if op.get_type_name() == "Convolution")
    return {"first": ops[0].get_type_name(), "last": ops[-1].get_type_name(),
            "parameters": [p.get_friendly_name() for p in model.get_parameters()],
            "results": len(model.get_results()), "ops": len(model.get_ops()),
            "output_node": model.output(0).get_node().get_type_name(),
            "output_names": sorted(model.output(0).get_names()),
            "input_type": model.input(0).get_element_type().get_type_name(),
            "input_shape": list(model.input(0).get_shape()),
            "weights": weights.get_data(), "strides": list(conv.get_attributes()["strides"]),
            "conv_input": conv.input_value(1).get_node().get_friendly_name(),
            "conv_shape": str(conv.get_output_partial_shape(0)),
            "conv_inputs": conv.get_input_size()}


@expected("model_inspection")
def _(paths):
    return {"first": "Parameter", "last": "Result", "parameters": ["image"], "results": 1,
            "ops": 12, "output_node": "Result", "output_names": ["probs"],
            "input_type": "f32", "input_shape": [1, 3, 4, 4], "weights": models.CONV_W,
            "strides": [1, 1], "conv_input": "conv_weights", "conv_shape": "[1,6,4,4]",
            "conv_inputs": 2}


@idiom
def graph_walk_and_extra_outputs(ov, paths, tmp):
    model = ov.Core().read_model(str(paths["classifier"]))
    param = model.get_parameters()[0]
    param.set_partial_shape(ov.PartialShape([2, 3, 4, 4]))
    model.validate_nodes_and_infer_types()
    relu = next(op for op in model.get_ordered_ops() if op.get_type_name() == "Relu")
    consumers = [t.get_node().get_type_name() for t in relu.output(0).get_target_inputs()]
    model.add_outputs(relu.output(0))
    compiled = ov.compile_model(model, "CPU", CONFIG)
    batch = np.concatenate(IMAGES[:2])
    results = compiled(batch)
    return {"outputs": len(compiled.outputs), "probs": results[0], "relu": results[1],
            "consumers": consumers, "node_outputs": [o.get_index() for o in relu.outputs()],
            "param_type": param.get_element_type().get_type_name(),
            "out_shape": str(model.output(0).get_partial_shape())}


@expected("graph_walk_and_extra_outputs")
def _(paths):
    batch = np.concatenate(IMAGES[:2])
    return {"outputs": 2, "probs": _ref(batch), "relu": models.relu_reference(batch),
            "consumers": ["ReduceMean"], "node_outputs": [0], "param_type": "f32",
            "out_shape": "[2,5]"}


@idiom
def rt_info_and_clone(ov, paths, tmp):
    model = ov.Core().read_model(str(paths["classifier"]))
    model.set_rt_info("f16", ["runtime_options", "KV_CACHE_PRECISION"])
    model.set_rt_info("hello", "greeting")
    copy = model.clone()
    copy.reshape([2, 3, 4, 4])
    ov.save_model(model, str(tmp / "rt.xml"), compress_to_fp16=False)
    again = ov.Core().read_model(str(tmp / "rt.xml"))
    return {"kv": again.get_rt_info(["runtime_options", "KV_CACHE_PRECISION"]).astype(str),
            "greeting": again.get_rt_info("greeting").value,
            "has": again.has_rt_info(["runtime_options", "KV_CACHE_PRECISION"]),
            "has_not": again.has_rt_info("nothing"),
            "original_shape": str(model.input(0).get_partial_shape()),
            "copy_shape": str(copy.input(0).get_partial_shape())}


@expected("rt_info_and_clone")
def _(paths):
    return {"kv": "f16", "greeting": "hello", "has": True, "has_not": False,
            "original_shape": "[1,3,4,4]", "copy_shape": "[2,3,4,4]"}


@idiom
def save_compressed_and_read_from_memory(ov, paths, tmp):
    model = ov.Core().read_model(str(paths["classifier"]))
    ov.save_model(model, str(tmp / "fp16.xml"), compress_to_fp16=True)
    compressed = ov.Core().read_model(str(tmp / "fp16.xml"))
    converts = sorted(op.get_friendly_name() for op in compressed.get_ops()
                      if op.get_type_name() == "Convert")
    xml = (tmp / "fp16.xml").read_bytes()
    weights = np.fromfile(str(tmp / "fp16.bin"), np.uint8)
    from_memory = ov.Core().read_model(xml, ov.Tensor(weights))
    compiled = ov.Core().compile_model(from_memory, "CPU", CONFIG)
    return {"converts": converts, "result": compiled(IMAGES[0])[0]}


@expected("save_compressed_and_read_from_memory")
def _(paths):
    return {"converts": ["conv_bias", "conv_weights", "fc_weights"]}


# --- state ----------------------------------------------------------------------------------------

@idiom
def stateful_model(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["stateful"]), "CPU", CONFIG)
    request = compiled.create_infer_request()
    ones = np.ones(2, np.float32)
    runs = [request.infer({"x": ones})[0].copy() for _ in range(3)]
    (state,) = request.query_state()
    after_three = state.state.data.copy()
    state.reset()
    after_reset_run = request.infer({"x": ones})[0].copy()
    state.state = ov.Tensor(np.array([100.0, 200.0], np.float32))
    after_set = request.infer({"x": ones})[0].copy()
    request.reset_state()
    after_reset_state = request.infer({"x": ones})[0].copy()
    return {"name": state.name, "runs": np.stack(runs), "state": after_three,
            "after_reset_run": after_reset_run, "after_set": after_set,
            "after_reset_state": after_reset_state}


@expected("stateful_model")
def _(paths):
    init = models.STATE_INIT
    return {"name": "acc", "runs": np.stack([init + 1, init + 2, init + 3]),
            "state": init + 3, "after_reset_run": init + 1,
            "after_set": np.array([101.0, 201.0], np.float32), "after_reset_state": init + 1}


# --- Core and properties ------------------------------------------------------------------------

@idiom
def core_and_properties(ov, paths, tmp):
    import importlib

    props = importlib.import_module(ov.__name__ + ".properties")
    hints = importlib.import_module(ov.__name__ + ".properties.hint")
    core = ov.Core()
    config = {hints.performance_mode: hints.PerformanceMode.THROUGHPUT,
              hints.inference_precision: ov.Type.f32, props.enable_profiling: True}
    compiled = core.compile_model(str(paths["classifier"]), "CPU", config)
    request = compiled.create_infer_request()
    request.infer(IMAGES[0])
    profiled = {p.node_name for p in request.get_profiling_info()}
    versions = core.get_versions("CPU")
    return {"cpu": "CPU" in core.available_devices,
            "hint": str(compiled.get_property(hints.performance_mode())),
            "precision": compiled.get_property(hints.inference_precision()).get_type_name(),
            "optimal": compiled.get_property(props.optimal_number_of_infer_requests()) >= 1,
            "profiles_conv": "conv" in profiled, "versions": list(versions),
            "has_build": bool(versions["CPU"].build_number)}


@expected("core_and_properties")
def _(paths):
    return {"cpu": True, "hint": "THROUGHPUT", "precision": "f32", "optimal": True,
            "profiles_conv": True, "versions": ["CPU"], "has_build": True}


@idiom
def errors_are_runtime_errors(ov, paths, tmp):
    compiled = ov.compile_model(str(paths["classifier"]), "CPU", CONFIG)
    caught = []
    for bad in (np.zeros((2, 2), np.float32), {"nope": IMAGES[0]}):
        try:
            compiled(bad)
        except RuntimeError:
            caught.append(True)
        except Exception:  # noqa: BLE001
            caught.append(False)
    try:
        ov.Core().read_model(str(tmp / "missing.xml"))
    except RuntimeError:
        caught.append(True)
    return {"caught": caught}


@expected("errors_are_runtime_errors")
def _(paths):
    return {"caught": [True, True, True]}
