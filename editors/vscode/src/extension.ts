// Starts `germanium lsp` for Viper files: diagnostics as you edit, hover with
// counterexamples, a code lens per member, symbols and go to definition all come from the
// server; this extension only starts it and contributes the language and its highlighting.

import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const settings = vscode.workspace.getConfiguration("germanium");
  const command = settings.get<string>("path", "germanium");
  const extra = settings.get<string[]>("arguments", []);
  const server: ServerOptions = { command, args: ["lsp", ...extra] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "viper" },
      { scheme: "untitled", language: "viper" },
    ],
  };
  // Settings are read when the extension starts: "Developer: Reload Window" applies changes.
  client = new LanguageClient("germanium", "Germanium", server, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
