"""The one table of diagnostic codes.

A code never changes meaning once released. Ranges: IR0xx files and XML, IR1xx layers and ports,
IR2xx the graph, IR3xx attributes and op rules (IR300-IR349 general; IR350 and up declared by
the ops that raise them, in their own files), IR4xx inference against what the XML declares, IR5xx
weights, IR6xx run-time inputs and values.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: str
    help: str
    # Whether a built-in operation can raise it, so tests/validate/fixtures/ holds an example.
    example: bool = True


_CODES = (
    Code("IR001", "file-unreadable", ERROR, "check the path and the file's permissions"),
    Code("IR002", "xml-syntax", ERROR, "the file is not well-formed XML; fix the markup at that line"),
    Code("IR003", "not-an-ir", ERROR, "an IR file has a root element <net> with a version attribute"),
    Code("IR004", "unsupported-ir-version", ERROR, "re-export the model as IR v10 or v11"),
    Code("IR005", "xml-doctype", ERROR,
         "an IR file has no <!DOCTYPE>, DTD or entity declarations: remove them (irexec never "
         "expands entities or reads external files)"),
    Code("IR006", "xml-limit", ERROR,
         "the XML nests elements too deeply or holds a text or attribute value too long for an "
         "IR file; it is damaged or hostile"),
    Code("IR101", "bad-layer-attribute", ERROR,
         "every <layer> needs id (a non-negative integer), name, type and version"),
    Code("IR102", "duplicate-layer-id", ERROR, "give every <layer> a unique id"),
    Code("IR103", "unknown-op", ERROR, "see `irexec ops` for the registered types and versions"),
    Code("IR104", "bad-port", ERROR, "every <port> needs a numeric id unique within its <input> or <output>"),
    Code("IR105", "bad-dim", ERROR, "a <dim> holds a non-negative integer, or -1 for a dynamic size"),
    Code("IR106", "bad-precision", ERROR, "use an element type name such as f32 or FP32"),
    Code("IR107", "question-mark-dim", ERROR,
         "write -1 in a <dim> for a dynamic size; `?` belongs in shape attributes only"),
    Code("IR108", "port-id-order", WARNING,
         "number input ports 0..n-1 and output ports from n, in the order they are listed"),
    Code("IR109", "over-memory-budget", ERROR,
         "make what is too big smaller (the dims, the XML, the constants), or raise the memory "
         "budget (--memory-budget, IREXEC_MEMORY_BUDGET) if the machine has the memory"),
    Code("IR110", "bad-port-map", ERROR,
         "a sub-graph's port map maps the layer's ports onto its body's Parameters (inputs) and "
         "Results (outputs); fix the ids"),
    Code("IR111", "bad-back-edge", ERROR,
         "a back edge goes from a body Result to a body Parameter of the same element type and a "
         "compatible shape"),
    Code("IR112", "missing-element-type", WARNING,
         "write the element type (element_type=\"f32\", ...): OpenVINO's CPU plugin cannot "
         "compile an input of dynamic type; irexec runs the model when the input is given and "
         "takes the array's type"),
    Code("IR113", "op-not-implemented", WARNING,
         "the layers are OpenVINO's, but irexec cannot run them yet: info, graph and validate "
         "work; run and compare need every op (`irexec ops` lists those irexec runs)"),
    Code("IR114", "too-many-dims", ERROR,
         "irexec computes with numpy, whose arrays hold at most 64 dims: give the tensor 64 dims "
         "or fewer"),
    Code("IR115", "too-many-iterations", ERROR,
         "a Loop or TensorIterator runs at most IREXEC_MAX_ITERATIONS body iterations (100,000 "
         "unless set), nested loops' included; give it a smaller trip count or a condition "
         "that stops it, or raise the limit if the model really needs more"),
    Code("IR201", "dangling-edge", ERROR, "an edge must name existing layers and ports"),
    Code("IR202", "unconnected-input", ERROR, "connect every input port with exactly one edge"),
    Code("IR203", "multiple-edges-into-input", ERROR, "an input port takes exactly one edge"),
    Code("IR204", "cycle", ERROR, "an IR graph must be acyclic"),
    Code("IR205", "unused-layer", WARNING, "remove the layer, or connect its output to a Result"),
    Code("IR206", "duplicate-edge", ERROR, "write each edge once"),
    Code("IR207", "duplicate-input-name", ERROR,
         "give every Parameter a layer name and tensor names no other Parameter uses"),
    Code("IR208", "unpaired-variable", ERROR,
         "a model's state variable is declared by a ReadValue and written by an Assign of the "
         "same variable_id: add the missing layer, or correct the variable_id"),
    Code("IR301", "missing-attribute", ERROR, "add the attribute to the layer's <data> element"),
    Code("IR302", "bad-attribute-value", ERROR, "see `irexec ops TYPE` for the allowed values"),
    Code("IR303", "wrong-port-count", ERROR, "give the layer the ports its operation takes"),
    Code("IR304", "bad-input-type", ERROR, "convert the input to an element type the operation accepts"),
    Code("IR305", "bad-input-rank", ERROR, "reshape the input to a rank the operation accepts"),
    Code("IR306", "axis-out-of-range", ERROR, "axes lie in [-rank, rank-1]"),
    Code("IR307", "shape-mismatch", ERROR, "make the inputs' shapes agree as the operation requires"),
    Code("IR308", "bad-value", ERROR,
         "change the values (a constant's, or the inputs reaching the layer) to ones the "
         "operation accepts"),
    Code("IR315", "axis-needs-static-rank", ERROR,
         "give the data a static rank, or name the axis by a non-negative number: a negative "
         "axis cannot be resolved without the rank, and OpenVINO refuses the model"),
    Code("IR345", "window-attribute-length", ERROR,
         "give strides, dilations, pads (and a pooling kernel) one value per spatial axis of "
         "the data (its rank minus 2)"),
    Code("IR346", "window-larger-than-input", ERROR,
         "the dilated kernel must fit in the padded input on every spatial axis: pad more, "
         "dilate less, or use a smaller kernel"),
    Code("IR347", "bad-window-attribute", ERROR,
         "strides, dilations and kernel sizes are at least 1; pads are at least 0"),
    Code("IR348", "channel-mismatch", ERROR,
         "the weights (or per-channel inputs) must be made for the data's channel count "
         "(dim 1)"),
    Code("IR310", "unknown-attribute", WARNING, "remove the attribute; the operation ignores it"),
    Code("IR325", "index-out-of-range", ERROR,
         "indices lie in [-dim, dim-1] of the axis they index (Gather-1/7: [0, dim-1]); "
         "Gather-8 is the exception: it gives zeros for the others"),
    Code("IR326", "element-count-mismatch", ERROR,
         "the target shape must hold as many elements as the data"),
    Code("IR327", "bad-shape-value", ERROR,
         "sizes are >= 0; -1 (computed) may appear once where the operation allows it, 0 copies "
         "a dim only with special_zero"),
    Code("IR328", "squeeze-axis-not-one", WARNING,
         "Squeeze keeps a named dim that is not 1; drop the axis or make the dim 1"),
    Code("IR329", "uneven-split", ERROR,
         "num_splits must divide the dim; split lengths must add up to it"),
    Code("IR330", "zero-step", ERROR, "a slice step (stride) is never 0"),
    Code("IR331", "block-mismatch", ERROR,
         "the dims must be divisible by the block size (or the product of the block shape)"),
    Code("IR332", "bad-pads", ERROR,
         "give one pad per axis; reflect pads at most dim-1, symmetric at most dim, and edge, "
         "reflect and symmetric need a non-empty dim to copy from"),
    Code("IR333", "repeated-axis", ERROR,
         "name each axis at most once (a Transpose order names every axis exactly once)"),
    Code("IR334", "axis-counted-once", WARNING,
         "the same axis is named twice; OpenVINO counts it once: name it once"),
    Code("IR401", "port-dims-mismatch", ERROR, "write the inferred dims on the port (or -1 for any)"),
    Code("IR402", "precision-mismatch", WARNING,
         "write the port's real element type as its precision"),
    Code("IR501", "missing-weights", ERROR, "put the .bin next to the .xml or pass its path"),
    Code("IR502", "weights-out-of-range", ERROR, "offset + size must lie inside the .bin file"),
    Code("IR503", "weights-too-small", ERROR, "size must hold every element the shape needs"),
    Code("IR504", "weights-larger-than-needed", WARNING,
         "set size to exactly the bytes the shape needs"),
    Code("IR505", "unsupported-element-type", ERROR, "convert the tensor to a supported element type"),
    Code("IR506", "bad-weights-payload", ERROR,
         "write the payload in OpenVINO's layout for its element type (string: count, offsets, "
         "text)"),
    Code("IR601", "bad-input-name", ERROR, "name inputs by a Parameter's name or tensor name"),
    Code("IR602", "missing-input", ERROR, "give a value for every Parameter"),
    Code("IR603", "input-type-mismatch", ERROR, "convert the array to the Parameter's element type"),
    Code("IR604", "input-shape-mismatch", ERROR, "give an array whose shape the Parameter allows"),
    Code("IR605", "bad-runtime-value", ERROR,
         "an operation without a rule code (a custom op) rejected the values reaching it, or "
         "memory ran out; see the message", example=False),
    Code("IR606", "input-file", ERROR, "give an existing .npy file written by numpy.save"),
    Code("IR620", "not-for-generation", ERROR,
         "generate takes a decoder as optimum-intel exports it (input_ids, attention_mask, "
         "position_ids, beam_idx or past_key_values.*; logits) and prompts of token ids in its "
         "vocabulary", example=False),
)

# The assembled table: the general codes above, then each op's own (``OpSpec.codes``), added
# when the op registers. Validation, the renderers and the docs read only this.
CODES: dict[str, Code] = {c.code: c for c in _CODES}
BY_NAME: dict[str, Code] = {c.name: c for c in _CODES}


def register(code: Code) -> None:
    """Add an op's own code. The same code may be declared again only with the same meaning
    (a family of ops shares its codes)."""
    known = CODES.get(code.code) or BY_NAME.get(code.name)
    if known is not None:
        if known != code:
            raise ValueError(f"diagnostic code {code.code} ({code.name}) is already {known.code} "
                             f"({known.name}) with another meaning")
        return
    CODES[code.code] = code
    BY_NAME[code.name] = code


# Loads every op module, whose codes join the table as they register (set by irexec.ops.registry,
# which imports an op's module only when a model uses the op).
_load_all = None


def set_loader(load_all) -> None:
    global _load_all
    _load_all = load_all


def get(code: str) -> Code:
    """The code's entry; an op's own code not yet in the table loads the ops first. KeyError
    for a code no one declares."""
    found = CODES.get(code)
    if found is None and _load_all is not None:
        _load_all()
        found = CODES.get(code)
    if found is None:
        raise KeyError(code)
    return found


def lookup(code_or_name: str) -> Code:
    found = CODES.get(code_or_name) or BY_NAME.get(code_or_name)
    if found is None and _load_all is not None:
        _load_all()
    return CODES.get(code_or_name) or BY_NAME[code_or_name]
