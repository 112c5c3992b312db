"""The file as a whole: IR version, root element, XML syntax, unreadable paths (IR001-IR004)."""

import pytest

import irexec
from tests.helpers_ir import line_of, read_error, write_ir

# Parameter -> Result, the smallest useful model; {version} is the <net> attribute text.
MINIMAL = """\
<?xml version="1.0"?>
<net name="m" {version}>
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="2" element_type="f32"/>
      <output>
        <port id="0" precision="FP32"><dim>2</dim></port>
      </output>
    </layer>
    <layer id="1" name="out" type="Result" version="opset1">
      <input>
        <port id="0"><dim>2</dim></port>
      </input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
  </edges>
</net>
"""


@pytest.mark.parametrize("version", [10, 11])
def test_supported_versions_are_read(tmp_path, version):
    model = irexec.read_model(write_ir(tmp_path, MINIMAL.format(version=f'version="{version}"')))
    assert model.ir_version == version
    assert [n.name for n in model.nodes] == ["x", "out"]


@pytest.mark.parametrize("version", ["9", "12", "0"])
def test_unsupported_version_is_ir004_naming_it_and_the_supported_ones(tmp_path, version):
    path = write_ir(tmp_path, MINIMAL.format(version=f'version="{version}"'))
    diag = the_only(read_error(path))
    assert diag.code == "IR004"
    assert f"'{version}'" in diag.message
    assert "10" in diag.message and "11" in diag.message
    assert diag.location.file == str(path)
    assert diag.location.line == line_of(path, "<net ")


def test_missing_version_is_ir004(tmp_path):
    path = write_ir(tmp_path, MINIMAL.format(version=""))
    diag = the_only(read_error(path))
    assert diag.code == "IR004"
    assert "missing" in diag.message and "10, 11" in diag.message
    assert diag.location.line == 2


@pytest.mark.parametrize("version", ["abc", "11.0", "v11", ""])
def test_non_integer_version_is_ir004(tmp_path, version):
    path = write_ir(tmp_path, MINIMAL.format(version=f'version="{version}"'))
    diag = the_only(read_error(path))
    assert diag.code == "IR004"
    assert f"'{version}'" in diag.message


def test_root_other_than_net_is_ir003_at_the_root_line(tmp_path):
    path = write_ir(tmp_path, '<?xml version="1.0"?>\n<model version="11">\n</model>\n')
    diag = the_only(read_error(path))
    assert diag.code == "IR003"
    assert "<model>" in diag.message
    assert diag.location.file == str(path)
    assert diag.location.line == 2


def test_root_name_is_compared_case_insensitively(tmp_path):
    # OpenVINO compares the root's name case-insensitively (facts (c), "File and versions").
    text = MINIMAL.format(version='version="11"').replace("<net ", "<NET ").replace("</net>",
                                                                                    "</NET>")
    model = irexec.read_model(write_ir(tmp_path, text))
    assert len(model.nodes) == 2


def test_malformed_xml_is_ir002_with_the_line(tmp_path):
    text = """\
    <?xml version="1.0"?>
    <net name="m" version="11">
      <layers>
        <layer id="0" name="x" type="Parameter" version="opset1">
      </layers>
    </net>
    """
    path = write_ir(tmp_path, text)
    diag = the_only(read_error(path))
    assert diag.code == "IR002"
    assert diag.location.file == str(path)
    # The parser finds the unclosed <layer> where </layers> closes the wrong element.
    assert diag.location.line == line_of(path, "</layers>")


def test_empty_file_is_ir002(tmp_path):
    path = write_ir(tmp_path, "")
    assert the_only(read_error(path)).code == "IR002"


def test_missing_file_is_ir001_naming_the_path(tmp_path):
    path = tmp_path / "nowhere.xml"
    error = read_error(path)
    diag = the_only(error)
    assert diag.code == "IR001"
    assert diag.location.file == str(path)
    assert str(path) in str(error)


def test_directory_instead_of_file_is_ir001(tmp_path):
    assert the_only(read_error(tmp_path)).code == "IR001"


def test_read_model_accepts_str_and_pathlike(tmp_path):
    path = write_ir(tmp_path, MINIMAL.format(version='version="11"'))
    assert irexec.read_model(str(path)).path == irexec.read_model(path).path == str(path)


def the_only(error):
    assert len(error.diagnostics) == 1, [str(d) for d in error.diagnostics]
    return error.diagnostics[0]


# --- columns: every file-level problem points at its element's "<" (1-based) -------------------

def test_unsupported_version_points_at_the_net_element(tmp_path):
    text = MINIMAL.format(version='version="9"').replace("<net ", "  <net ")
    path = write_ir(tmp_path, text)
    diag = the_only(read_error(path))
    assert diag.code == "IR004"
    assert (diag.location.line, diag.location.column) == (2, 3)


def test_root_other_than_net_points_at_the_root_element(tmp_path):
    path = write_ir(tmp_path, '<?xml version="1.0"?>\n <model version="11">\n </model>\n')
    diag = the_only(read_error(path))
    assert diag.code == "IR003"
    assert (diag.location.line, diag.location.column) == (2, 2)


def test_malformed_xml_has_a_column_on_the_line(tmp_path):
    path = write_ir(tmp_path, MINIMAL.format(version='version="11" version="11"'))
    diag = the_only(read_error(path))
    assert diag.code == "IR002" and diag.location.line == 2
    line = path.read_text().splitlines()[1]
    assert 1 <= diag.location.column <= len(line) + 1


# --- reading the bytes: what fstat says, and no more --------------------------------------------

def test_reading_the_xml_allocates_about_its_size(tmp_path):
    """One read of the size fstat gives; no second read that allocates a 16 MiB chunk only to
    meet the end of the file."""
    import tracemalloc

    from irexec.io import files

    text = MINIMAL.format(version='version="11"').replace("<layers>", "<!--" + "x" * 100_000
                                                          + "--><layers>")
    path = write_ir(tmp_path, text)
    with files.open_file(path) as f:
        tracemalloc.start()
        try:
            data = files.read_at_most(f, 1 << 30)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert data == path.read_bytes()
    assert peak < 2 * len(data), peak
    assert irexec.read_model(path).parameters[0].name == "x"


def test_a_file_longer_than_fstat_said_is_read_to_its_end(tmp_path):
    """A file that grew after fstat: the first read is full, so reading goes on."""
    import io

    from irexec.io import files

    small = tmp_path / "small"
    small.write_bytes(b"0123456789")  # what fstat says
    grown = bytes(range(256)) * 40

    class Grown(io.BytesIO):
        def fileno(self):
            return fd

    with open(small, "rb") as real:
        fd = real.fileno()
        assert files.read_at_most(Grown(grown), 1 << 30) == grown
        assert files.read_at_most(Grown(grown), 100) == grown[:101]  # the limit and one byte
