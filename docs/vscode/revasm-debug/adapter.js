// How the revasm-debug extension reaches the debug adapter, without VS Code's API (so a
// test runs it under plain Node): a port to connect to, or the `revasm` executable to run
// as `revasm dap`.
"use strict";

const path = require("path");
const os = require("os");
const fs = require("fs");

// The name of the executable in a virtual environment, by platform.
function venvExecutable(folder, platform) {
  return platform === "win32"
    ? path.join(folder, ".venv", "Scripts", "revasm.exe")
    : path.join(folder, ".venv", "bin", "revasm");
}

// ~ and ${workspaceFolder} in a setting (VS Code substitutes them in launch.json, not in
// settings).
function expand(text, folder) {
  let out = text.trim();
  if (out === "~" || out.startsWith("~/")) {
    out = path.join(os.homedir(), out.slice(1));
  }
  if (folder) {
    out = out.split("${workspaceFolder}").join(folder);
  }
  return out;
}

// What to start for one debug session:
//   {kind: "server", port, host}           launch.json "port": a running `revasm dap --port N`
//   {kind: "executable", command, args, origin}
// The executable is the first of: launch.json "runtimeExecutable", the setting
// "revasm.path", the workspace's .venv/bin/revasm when it exists, `revasm` on the PATH.
// An explicit path that does not exist is an error (thrown), so VS Code says which.
function resolveAdapter(configuration, setting, folders, platform, exists) {
  const config = configuration || {};
  const check = exists || fs.existsSync;
  const system = platform || process.platform;
  if (config.port !== undefined) {
    const port = config.port;
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`revasm: "port" is a TCP port from 1 to 65535, not ${JSON.stringify(port)}`);
    }
    return { kind: "server", port: port, host: "127.0.0.1" };
  }
  const folder = (folders || [])[0];
  const explicit = [
    ["runtimeExecutable", config.runtimeExecutable],
    ["revasm.path", setting],
  ];
  for (const [origin, value] of explicit) {
    if (typeof value === "string" && value.trim() !== "") {
      const command = expand(value, folder);
      const isPath = command.includes("/") || command.includes("\\");
      if (isPath && !check(command)) {
        throw new Error(`revasm: ${origin} is ${command}, which does not exist ` +
                        "(the revasm executable, e.g. .venv/bin/revasm)");
      }
      return { kind: "executable", command: command, args: ["dap"], origin: origin };
    }
  }
  for (const each of folders || []) {
    const candidate = venvExecutable(each, system);
    if (check(candidate)) {
      return { kind: "executable", command: candidate, args: ["dap"], origin: ".venv" };
    }
  }
  return { kind: "executable", command: "revasm", args: ["dap"], origin: "PATH" };
}

module.exports = { resolveAdapter, venvExecutable, expand };
