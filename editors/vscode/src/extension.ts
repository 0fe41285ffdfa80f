// ts — VS Code client for ts-lsp, the language server of ts (Task Scheduling checks).
//
// Starts `ts.server.command ts.server.args` (default: `python3 -m ts_lsp`) over stdio for
// Python files. Diagnostics, quick fixes and hovers come from the server; the settings
// under `ts.*` reach it as initializationOptions and through workspace/configuration
// (section "ts"), and a change is announced with workspace/didChangeConfiguration.
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

const SECTION = "ts";
let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

function serverOptions(): ServerOptions {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const command = cfg.get<string>("server.command") || "python3";
  const args = cfg.get<string[]>("server.args") ?? ["-m", "ts_lsp"];
  return { command, args, transport: TransportKind.stdio };
}

function serverSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const out: Record<string, unknown> = {};
  for (const key of ["select", "ignore", "lintOn", "debounceMs", "docsBaseUrl", "explainUnknown", "checker"]) {
    const value = cfg.get(key);
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  output = output ?? vscode.window.createOutputChannel("ts");
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
    initializationOptions: serverSettings(),
    synchronize: { configurationSection: SECTION },
    outputChannel: output,
    traceOutputChannel: output,
  };
  client = new LanguageClient("ts", "ts language server", serverOptions(), clientOptions);
  try {
    await client.start();
  } catch (err) {
    const opts = serverOptions() as { command: string; args?: string[] };
    void vscode.window.showErrorMessage(
      `ts: could not start "${opts.command} ${(opts.args ?? []).join(" ")}": ${err}. ` +
        "Install ts-toolkit in that interpreter or set ts.server.command / ts.server.args.",
    );
  }
}

async function stop(): Promise<void> {
  if (client) {
    const c = client;
    client = undefined;
    await c.stop();
  }
}

async function openSchedule(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) {
    void vscode.window.showInformationMessage("ts: open a Python file first.");
    return;
  }
  const position = editor.selection.active;
  const text = await client.sendRequest(ExecuteCommandRequest.type, {
    command: "ts.showSchedule",
    arguments: [editor.document.uri.toString(), { line: position.line, character: position.character }],
  });
  if (typeof text !== "string" || !text) {
    void vscode.window.showInformationMessage("ts: no TaskManager here.");
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ content: text, language: "plaintext" });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("ts.openSchedule", openSchedule),
    vscode.commands.registerCommand("ts.restartServer", async () => {
      await stop();
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration(`${SECTION}.server`)) {
        await stop();
        await start(context);
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}
