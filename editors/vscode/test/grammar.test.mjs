// The highlighting grammar, as VS Code runs it (vscode-textmate with the Oniguruma engine):
// each sample's tokens get the scopes a theme colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import textmate from "vscode-textmate";
import oniguruma from "vscode-oniguruma";

const require = createRequire(import.meta.url);
const here = new URL("..", import.meta.url);

async function grammar() {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async () =>
      textmate.parseRawGrammar(
        readFileSync(new URL("syntaxes/viper.tmLanguage.json", here), "utf8"),
        "viper.tmLanguage.json",
      ),
  });
  return registry.loadGrammar("source.viper");
}

/** Each token's text and its innermost scope, for one line. */
function tokens(g, line, state = textmate.INITIAL) {
  const result = g.tokenizeLine(line, state);
  return result.tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes.at(-1)]);
}

function scopeOf(g, line, text) {
  const found = tokens(g, line).find(([t]) => t.trim() === text);
  assert.ok(found, `no token ${JSON.stringify(text)} in ${JSON.stringify(tokens(g, line))}`);
  return found[1];
}

test("declarations, specifications, statements and types get their scopes", async () => {
  const g = await grammar();
  const line = "method inc(x: Ref) returns (r: Int) requires acc(x.f, write) ensures r == old(x.f) + 1";
  assert.equal(scopeOf(g, line, "method"), "storage.type.viper");
  assert.equal(scopeOf(g, line, "inc"), "entity.name.function.viper");
  assert.equal(scopeOf(g, line, "Ref"), "support.type.viper");
  assert.equal(scopeOf(g, line, "requires"), "keyword.other.specification.viper");
  assert.equal(scopeOf(g, line, "acc"), "support.function.builtin.viper");
  assert.equal(scopeOf(g, line, "write"), "constant.language.viper");
  assert.equal(scopeOf(g, line, "1"), "constant.numeric.integer.viper");
  const body = "  unfold list(x); assert x.next != null ==> x.f > 0 // done";
  assert.equal(scopeOf(g, body, "unfold"), "keyword.control.viper");
  assert.equal(scopeOf(g, body, "null"), "constant.language.viper");
  assert.equal(scopeOf(g, body, "==>"), "keyword.operator.viper");
  assert.equal(scopeOf(g, body, "// done"), "comment.line.double-slash.viper");
  // A name that merely contains a keyword is not one.
  assert.equal(scopeOf(g, "var accx: Int", "accx"), "source.viper");
});

test("block comments span lines and imports name their file", async () => {
  const g = await grammar();
  const first = g.tokenizeLine("/* a method", textmate.INITIAL);
  const second = tokens(g, "   still comment */ field f: Int", first.ruleStack);
  assert.equal(second[0][1], "comment.block.viper");
  assert.equal(second.find(([t]) => t === "field")[1], "storage.type.viper");
  assert.equal(scopeOf(g, 'import "lists.vpr"', '"lists.vpr"'), "string.quoted.other.viper");
});
