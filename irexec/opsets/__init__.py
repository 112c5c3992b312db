"""Building models in Python with OpenVINO's opset functions (``irexec.opset1`` ...
``irexec.opset17``): ``signatures.py`` (generated from OpenVINO's Python modules by
tools/make_opset_api.py), ``functions.py`` (the functions made from it), ``graph.py`` (layers
made and inferred one at a time; ``Model(results, parameters, name)``)."""
