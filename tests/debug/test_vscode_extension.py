"""The VS Code extension (docs/vscode/revasm-debug): its launch schema and the adapter agree
(``set`` as a list or an object), it is packaged without vsce's warnings (repository,
LICENSE, .vscodeignore), and its code finds the ``revasm`` executable (runtimeExecutable,
the setting ``revasm.path``, the workspace's .venv, the PATH) or a ``revasm dap --port``
server -- run under Node with a stand-in for VS Code's API."""
from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from revasm.cli.commands_debug import dap_session
from revasm.debug.dap import Adapter

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "docs" / "vscode" / "revasm-debug"
PACKAGE = json.loads((EXTENSION / "package.json").read_text())
[DEBUGGER] = PACKAGE["contributes"]["debuggers"]
LAUNCH = DEBUGGER["configurationAttributes"]["launch"]
BESSEL = ROOT / "examples" / "bessel_j2.pal"

TYPES = {"string": str, "number": (int, float), "boolean": bool, "array": list, "object": dict}
KNOWN = {"type", "items", "additionalProperties", "propertyNames", "pattern", "enum",
         "properties", "required", "default", "description", "markdownDescription",
         "enumDescriptions", "scope"}


def problems(value: object, schema: dict, where: str = "") -> list[str]:
    """What ``value`` breaks of ``schema`` (the JSON Schema keywords the extension uses;
    an unknown keyword is a failure, not a silent pass)."""
    unknown = set(schema) - KNOWN
    assert not unknown, f"{where}: the test does not check {unknown}"
    out = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(isinstance(value, TYPES[k]) and not (k == "number" and isinstance(value, bool))
                   for k in kinds):
            return [f"{where}: {value!r} is not {kinds}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} not in {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            out += problems(item, schema["items"], f"{where}[{index}]")
    if isinstance(value, dict):
        out += [f"{where}: {name} is required" for name in schema.get("required", [])
                if name not in value]
        for name, item in value.items():
            if "propertyNames" in schema:
                out += problems(name, schema["propertyNames"], f"{where} key {name!r}")
            if name in schema.get("properties", {}):
                out += problems(item, schema["properties"][name], f"{where}.{name}")
            elif "additionalProperties" in schema:
                out += problems(item, schema["additionalProperties"], f"{where}.{name}")
    return out


def configuration(**fields) -> dict:
    return {"program": "${file}", **fields}


def test_the_launch_schema_takes_set_as_a_list_or_an_object():
    examples = json.loads((ROOT / "docs" / "vscode" / "launch.json").read_text())
    for each in examples["configurations"] + DEBUGGER["initialConfigurations"]:
        fields = {k: v for k, v in each.items() if k not in ("type", "request", "name")}
        assert problems(fields, LAUNCH) == [], each
    assert any(isinstance(c.get("set"), dict) for c in examples["configurations"])
    for good in (["x=1.0", "$3=raw:0x8000"], {"x": 1.0, "n": 6, "y": "raw:0x8000"}, {}):
        assert problems(configuration(set=good), LAUNCH) == [], good
    for bad in ({"x": [1]}, {"x": True}, {"x=1": 1}, ["x"], 5, "x=1"):
        assert problems(configuration(set=bad), LAUNCH), bad
    assert problems(configuration(display="words", runtimeExecutable="/opt/revasm",
                                  port=4711), LAUNCH) == []
    assert problems(configuration(display="reals"), LAUNCH)


def _launch(arguments: dict) -> tuple[dict, Adapter]:
    sent: list[dict] = []
    adapter = Adapter(sent.append, dap_session)
    adapter.handle({"seq": 1, "type": "request", "command": "launch", "arguments": arguments})
    [answer] = [m for m in sent if m["type"] == "response"]
    return answer, adapter


def test_the_adapter_takes_set_as_an_object_by_the_value_rule_and_refuses_what_the_schema_does():
    listed, by_list = _launch({"program": str(BESSEL), "set": ["x=0.1"]})
    answer, by_object = _launch({"program": str(BESSEL), "set": {"x": 0.1}})
    assert listed["success"] and answer["success"]
    assert by_object.session is not None and by_list.session is not None
    assert by_object.session.named_words() == by_list.session.named_words()
    assert by_object.session.named()["x"] == pytest.approx(0.1, abs=2 ** -32)
    raw, raw_adapter = _launch({"program": str(BESSEL), "set": {"x": "raw:0x8000"}})
    assert raw["success"] and raw_adapter.session is not None
    assert raw_adapter.session.named_words()["x"] == (0x8000, True)
    for bad, says in (({"x": True}, "the value of 'x' is a number or a string"),
                      ({"x": None}, "not null"), ({"x": [1]}, "not [1]"),
                      ({"x=1": 1}, "'x=1' is not a name"), ({"": 1}, "is not a name"),
                      (5, '"set" is a list of "NAME=VALUE" strings or an object'),
                      ({"x": 1e10}, "does not fit Q32.32")):
        answer, _ = _launch({"program": str(BESSEL), "set": bad})
        assert not answer["success"] and says in answer["message"], (bad, answer)


def test_the_extension_is_packaged_without_vsce_warnings():
    assert PACKAGE["license"] == "MIT" and (EXTENSION / "LICENSE").is_file()
    assert "MIT License" in (EXTENSION / "LICENSE").read_text()
    repository = PACKAGE["repository"]
    assert repository["type"] == "git" and repository["url"].startswith("https://")
    assert repository["directory"] == EXTENSION.relative_to(ROOT).as_posix()
    assert (EXTENSION / "README.md").is_file()
    ignored = [line.strip() for line in (EXTENSION / ".vscodeignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert ignored
    shipped = [PACKAGE["main"], "adapter.js", DEBUGGER["program"], "README.md", "LICENSE"]
    for name in shipped:
        relative = Path(name).as_posix().removeprefix("./")
        assert (EXTENSION / relative).is_file(), name
        assert not any(fnmatch.fnmatch(relative, pattern) for pattern in ignored), name
    assert "onDebug" in PACKAGE["activationEvents"]
    setting = PACKAGE["contributes"]["configuration"]["properties"]["revasm.path"]
    assert setting["type"] == "string" and setting["default"] == ""


NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")


def _node(script: str, tmp_path: Path) -> object:
    done = subprocess.run([NODE or "node", "-e", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path,
                          env={"NODE_PATH": str(tmp_path / "node_modules"), "HOME": "/home/u"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_node
def test_the_extension_finds_revasm_by_launch_setting_venv_then_path(tmp_path):
    venv = tmp_path / "ws" / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "revasm").write_text("#!/bin/sh\n")
    elsewhere = tmp_path / "other" / "revasm"
    elsewhere.parent.mkdir()
    elsewhere.write_text("#!/bin/sh\n")
    cases = {
        "venv": [{}, "", [str(tmp_path / "ws")]],
        "path": [{}, "", [str(tmp_path / "empty")]],
        "setting": [{}, "${workspaceFolder}/../other/revasm", [str(tmp_path / "ws")]],
        "home": [{}, "~/bin/revasm-x", []],
        "launch": [{"runtimeExecutable": str(elsewhere)}, "/no/such/revasm",
                   [str(tmp_path / "ws")]],
        "port": [{"port": 4711, "runtimeExecutable": str(elsewhere)}, "", []],
        "missing": [{}, "/no/such/revasm", []],
        "bad port": [{"port": "4711"}, "", []],
    }
    script = f"""
const {{ resolveAdapter }} = require({json.dumps(str(EXTENSION / "adapter.js"))});
const out = {{}};
for (const [name, [config, setting, folders]] of Object.entries({json.dumps(cases)})) {{
  const exists = (p) => name === "home" || require("fs").existsSync(p);
  try {{ out[name] = resolveAdapter(config, setting, folders, "linux", exists); }}
  catch (error) {{ out[name] = {{ error: error.message }}; }}
}}
console.log(JSON.stringify(out));
"""
    found = _node(script, tmp_path)
    assert isinstance(found, dict)
    assert found["venv"] == {"kind": "executable", "command": str(venv / "revasm"),
                             "args": ["dap"], "origin": ".venv"}
    assert found["path"]["command"] == "revasm" and found["path"]["origin"] == "PATH"
    assert Path(found["setting"]["command"]).resolve() == elsewhere.resolve()
    assert found["setting"]["origin"] == "revasm.path"
    assert found["home"]["command"] == "/home/u/bin/revasm-x"
    assert found["launch"]["command"] == str(elsewhere)  # runtimeExecutable before the setting
    assert found["port"] == {"kind": "server", "port": 4711, "host": "127.0.0.1"}
    assert "revasm.path is /no/such/revasm, which does not exist" in found["missing"]["error"]
    assert '"port" is a TCP port' in found["bad port"]["error"]


@needs_node
def test_the_extension_registers_a_factory_that_starts_revasm_dap(tmp_path):
    stand_in = tmp_path / "node_modules" / "vscode"
    stand_in.mkdir(parents=True)
    (stand_in / "index.js").write_text("""
exports.registered = [];
exports.errors = [];
exports.debug = { registerDebugAdapterDescriptorFactory(type, factory) {
  exports.registered.push(type); return { dispose() {} }; } };
exports.workspace = { workspaceFolders: [{ uri: { fsPath: "/ws" } }],
  getConfiguration(section) { return { get(key) {
    return section === "revasm" && key === "path" ? "/opt/venv/bin/revasm" : undefined; } }; } };
exports.window = { showErrorMessage(message) { exports.errors.push(message); } };
exports.DebugAdapterExecutable = class { constructor(command, args) {
  this.command = command; this.args = args; } };
exports.DebugAdapterServer = class { constructor(port, host) {
  this.port = port; this.host = host; } };
""")
    script = f"""
const vscode = require("vscode");
const extension = require({json.dumps(str(EXTENSION / "extension.js"))});
const context = {{ subscriptions: [] }};
extension.activate(context);
const exists = require("fs").existsSync;
require("fs").existsSync = (p) => p === "/opt/venv/bin/revasm" || exists(p);
const create = (configuration) => extension.factory.createDebugAdapterDescriptor(
  {{ configuration }});
const start = create({{}});
const server = create({{ port: 5000 }});
let refused = null;
try {{ create({{ runtimeExecutable: "/x/revasm" }}); }}
catch (error) {{ refused = error.message; }}
console.log(JSON.stringify({{ registered: vscode.registered,
  subscriptions: context.subscriptions.length, start, server, refused,
  errors: vscode.errors }}));
"""
    found = _node(script, tmp_path)
    assert found == {
        "registered": ["revasm"], "subscriptions": 1,
        "start": {"command": "/opt/venv/bin/revasm", "args": ["dap"]},
        "server": {"port": 5000, "host": "127.0.0.1"},
        "refused": "revasm: runtimeExecutable is /x/revasm, which does not exist "
                   "(the revasm executable, e.g. .venv/bin/revasm)",
        "errors": ["revasm: runtimeExecutable is /x/revasm, which does not exist "
                   "(the revasm executable, e.g. .venv/bin/revasm)"]}
