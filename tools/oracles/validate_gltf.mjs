// Validates one binary glTF with the Khronos glTF validator and prints the
// report's issue summary (counts by severity, the issue list, the extensions
// and the validator's version) as one line of JSON.
//
// Usage: node tools/oracles/validate_gltf.mjs FILE.glb
// The validator's `node_modules` folder is found through NODE_PATH or, by
// default, in `.oracles/node_modules` at the repository root (installed by
// `.ci/setup`). Exits 1 when the report has errors, 2 on a usage or I/O error.

import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const file = process.argv[2];
if (!file) {
  console.error("usage: node validate_gltf.mjs FILE.glb");
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const modules = process.env.GLTF_VALIDATOR_MODULES ?? path.join(root, ".oracles", "node_modules");
const require = createRequire(path.join(modules, "noop.js"));
const validator = require("gltf-validator");

let bytes;
try {
  bytes = new Uint8Array(await readFile(file));
} catch (e) {
  console.error(`cannot read ${file}: ${e.message}`);
  process.exit(2);
}
const report = await validator.validateBytes(bytes, {
  uri: path.basename(file),
  format: "glb",
  maxIssues: 0,
  writeTimestamp: false,
});
const issues = report.issues;
const summary = {
  validatorVersion: report.validatorVersion,
  numErrors: issues.numErrors,
  numWarnings: issues.numWarnings,
  numInfos: issues.numInfos,
  numHints: issues.numHints,
  messages: issues.messages.map((m) => ({
    code: m.code,
    severity: m.severity,
    pointer: m.pointer,
    offset: m.offset,
    message: m.message,
  })),
  extensionsUsed: report.info?.extensionsUsed ?? [],
  extensionsRequired: report.info?.extensionsRequired ?? [],
};
console.log(JSON.stringify(summary));
process.exit(issues.numErrors > 0 ? 1 : 0);
