// revasm-debug: starts revasm's Debug Adapter Protocol server for a `revasm` debug session
// (docs/debugger.md "VS Code"). adapter.js decides what to start; this file is the glue
// to VS Code's API.
"use strict";

const vscode = require("vscode");
const { resolveAdapter } = require("./adapter");

const factory = {
  createDebugAdapterDescriptor(session) {
    const settings = vscode.workspace.getConfiguration(
      "revasm", session.workspaceFolder ? session.workspaceFolder.uri : undefined);
    const folders = [];
    if (session.workspaceFolder) {
      folders.push(session.workspaceFolder.uri.fsPath);
    }
    for (const each of vscode.workspace.workspaceFolders || []) {
      if (!folders.includes(each.uri.fsPath)) {
        folders.push(each.uri.fsPath);
      }
    }
    let target;
    try {
      target = resolveAdapter(session.configuration, settings.get("path"), folders);
    } catch (error) {
      vscode.window.showErrorMessage(error.message);
      throw error;
    }
    if (target.kind === "server") {
      return new vscode.DebugAdapterServer(target.port, target.host);
    }
    return new vscode.DebugAdapterExecutable(target.command, target.args);
  },
};

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory("revasm", factory));
}

function deactivate() {}

module.exports = { activate, deactivate, factory };
