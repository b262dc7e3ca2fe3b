// Runs adapters/pi/index.ts under Node with a fake `pi` object (driven by tests/test_pi_extension.py).
//
//   node tests/pi_fake.mjs <adapter dir> <repo with lessons> <keeper command...>
//
// The extension is transpiled with the adapter's own TypeScript (its dev dependency). The fake
// `pi.exec` runs the real keeper (or a failing one) and records every call. Prints "ok" when every
// check holds; any failed check throws (exit 1).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [adapter, repo, ...keeper] = process.argv.slice(2);
const require = createRequire(join(adapter, "package.json"));
const ts = require("typescript");
const js = ts.transpileModule(readFileSync(join(adapter, "index.ts"), "utf8"), {
	compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
}).outputText;
const file = join(mkdtempSync(join(tmpdir(), "priors-pi-")), "index.mjs");
writeFileSync(file, js);
const extension = (await import(pathToFileURL(file).href)).default;

function fakePi(mode) {
	const handlers = {};
	const commands = {};
	const calls = [];
	const pi = {
		on(event, handler) {
			handlers[event] = handler;
		},
		registerCommand(name, options) {
			commands[name] = options;
		},
		async exec(command, args, options) {
			calls.push({ command, args, cwd: options?.cwd });
			if (mode === "missing") throw new Error(`spawn ${command} ENOENT`);
			if (mode === "failing") return { stdout: "", stderr: "priors: .priors/config.json is not valid JSON\n", code: 2, killed: false };
			const [exe, ...pre] = keeper;
			const r = spawnSync(exe, [...pre, ...args], { cwd: options?.cwd, encoding: "utf8" });
			return { stdout: r.stdout, stderr: r.stderr, code: r.status, killed: false };
		},
	};
	extension(pi);
	return { pi, handlers, commands, calls };
}

function fakeCtx(choices = []) {
	const notices = [];
	return {
		notices,
		ctx: {
			cwd: repo,
			hasUI: true,
			sessionManager: { getSessionId: () => "3f2a-session" },
			ui: {
				notify(message, type) {
					notices.push({ message, type });
				},
				async select(_title, _options) {
					return choices.shift();
				},
			},
		},
	};
}

const BASE = "You are Pi.";

// 1. the system prompt gains the lessons, ranked for the prompt, for this session
{
	const { handlers, calls } = fakePi("real");
	const { ctx, notices } = fakeCtx();
	const out = await handlers.before_agent_start({ prompt: "why is the parser test flaky?", systemPrompt: BASE }, ctx);
	assert.equal(calls.length, 1);
	assert.deepEqual(calls[0].args, ["lessons", "--inject", "--query", "why is the parser test flaky?", "--session", "pi-3f2a-session"]);
	assert.equal(calls[0].cwd, repo);
	assert.ok(out.systemPrompt.startsWith(BASE + "\n\n## Lessons from this repository (priors)"), out.systemPrompt);
	assert.ok(out.systemPrompt.includes("[P-0002] The parser tests are flaky"), out.systemPrompt);
	assert.deepEqual(notices, []);
}

// 2. a missing or failing keeper changes nothing, and says why (once per trouble)
for (const mode of ["missing", "failing"]) {
	const { handlers } = fakePi(mode);
	const { ctx, notices } = fakeCtx();
	for (let i = 0; i < 2; i++) {
		const out = await handlers.before_agent_start({ prompt: "anything", systemPrompt: BASE }, ctx);
		assert.equal(out, undefined);
	}
	assert.equal(notices.length, 1, JSON.stringify(notices));
	assert.equal(notices[0].type, "warning");
	assert.match(notices[0].message, mode === "missing" ? /cannot run priors .*ENOENT/ : /config\.json is not valid JSON/);
}

// 3. each command calls the right verb
{
	const { commands, calls } = fakePi("real");
	assert.ok(commands.priors && typeof commands.priors.handler === "function");
	const { ctx, notices } = fakeCtx();
	await commands.priors.handler("score success tests passed", ctx);
	assert.deepEqual(calls.at(-1).args, ["score", "last", "success", "--because", "tests passed"]);
	assert.match(notices.at(-1).message, /^priors: run-\d+ → success \(a coding session: credits \d+ lessons?/);
	await commands.priors.handler("score partial --replace", ctx);
	assert.deepEqual(calls.at(-1).args, ["score", "last", "partial", "--replace"]);
	await commands.priors.handler("score meh", ctx);
	assert.equal(calls.at(-1).args[2], "partial"); // a bad outcome runs nothing
	assert.match(notices.at(-1).message, /^usage: \/priors score/);
	await commands.priors.handler("status", ctx);
	assert.deepEqual(calls.at(-1).args, ["status", "--calls"]);
	assert.match(notices.at(-1).message, /^dev: /);
}

// 4. /priors review: proposed lessons one by one — accept, retire, skip — through `priors decide`
{
	const { commands, calls } = fakePi("real");
	const { ctx, notices } = fakeCtx(["accept", "skip", "retire"]);
	await commands.priors.handler("review", ctx);
	const decides = calls.filter((c) => c.args[0] === "decide").map((c) => c.args);
	assert.deepEqual(decides, [["decide", "P-0003", "accepted"], ["decide", "P-0005", "obsolete"]]);
	assert.match(notices.at(-1).message, /P-0003 → accepted/);
	// without a UI (print mode) the proposals are listed with the commands that answer them
	const plain = fakeCtx();
	plain.ctx.hasUI = false;
	await commands.priors.handler("review", plain.ctx);
	assert.equal(calls.at(-1).args[0], "lessons");
	assert.equal(plain.notices.length, 1);
	assert.match(plain.notices[0].message, /1 proposed lesson\(s\):\nP-0004 \(dev\) .* — priors decide P-0004 accepted \| obsolete$/);
}

console.log("ok");
