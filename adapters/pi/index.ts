/**
 * priors for Pi: pi-prior's whole loop over the priors keeper — lessons in every prompt, traces of
 * every agent run, `/priors …` for the person, and a `priors_lessons` tool for the model.
 *
 * A thin layer over the `priors` command (on PATH, or the command named by PRIORS_BIN), which stays
 * the single source of truth; adapters/pi.md maps every pi-prior command onto the keeper's verbs.
 *   - before_agent_start: `priors lessons --inject --query <prompt> --session <this session>`; the
 *     advisory block is appended to that turn's system prompt (never twice: a copy loaded beside
 *     this one, `-e` plus the installed extension, stays inert).
 *   - agent_end: `priors trace - --session <this session>` with the prompt, the lessons given and
 *     short assistant and tool snippets (the keeper cuts them and replaces secrets).
 *   - /priors score …: `priors score OUTCOME --session <this session>` — this session's lessons,
 *     whatever other sessions did since.
 *   - the model's tool `priors_lessons`: list, retrieve, propose, revise — never accept, retire,
 *     edit or delete; those are the person's `/priors` commands. A `tool_call` handler refuses the
 *     model's own shell runs of the person's verbs and its writes into `.priors/` (a guard against
 *     the obvious, not a sandbox: adapters/pi.md says what it cannot stop).
 * Every answer is shown: in Pi's notice area with a UI, on stdout in print and JSON modes (where
 * Pi's notify does nothing), as an RPC notify event in RPC mode.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { LessonRow, Ran, ToolParams } from "./words.js";
import {
	CONFIG_KEYS,
	DELETES,
	HEADING,
	MAX_QUERY,
	NOT_CARRIED,
	OUTCOMES,
	PERSONS_NOTE,
	PROBE,
	SHOWN,
	STATUSES,
	TIMEOUT_MS,
	USAGE,
	keeperCommand,
	keeperFound,
	lessonNs,
	outputMode,
	personsCommand,
	plural,
	reason,
	sessionKey,
	tagArgs,
	tagsAndText,
} from "./words.js";

export default function priors(pi: ExtensionAPI): void {
	// Loaded twice (`pi -e …/index.ts` beside the installed copy), every prompt would get the block
	// twice and `/priors` would become `/priors:1` and `/priors:2`. So a copy first asks on Pi's
	// event bus whether a live copy is there: one is, until its session shuts down (a /reload
	// shuts it down before loading afresh) — then this copy registers nothing at all.
	const probe = { found: false };
	pi.events.emit(PROBE, probe);
	if (probe.found) return;
	let alive = true;
	const stop = pi.events.on(PROBE, (data) => {
		if (alive) (data as { found: boolean }).found = true;
	});
	pi.on("session_shutdown", async () => {
		alive = false;
		stop();
	});

	let lastWarning = "";
	let turnEnded: (() => void) | undefined; // /priors learn waits for the turn it started
	let learning = false; // the /priors learn turn: its prompt is the packet — no lessons, no trace of its own
	let prompt = "";
	let given: string[] = [];
	const mode = outputMode();

	async function run(ctx: ExtensionContext, args: string[]): Promise<Ran> {
		const cmd = keeperCommand();
		try {
			const r = await pi.exec(cmd, args, { cwd: ctx.cwd, timeout: TIMEOUT_MS });
			if (r.killed) return { ok: false, stdout: "", why: "the keeper took too long" };
			if (r.code !== 0 && !keeperFound(cmd)) return { ok: false, stdout: "", why: missing(cmd) };
			if (r.code !== 0) return { ok: false, stdout: r.stdout, why: reason(r.stdout, r.stderr, r.code) };
			return { ok: true, stdout: r.stdout, why: "" };
		} catch (e) {
			if (!keeperFound(cmd)) return { ok: false, stdout: "", why: missing(cmd) };
			return { ok: false, stdout: "", why: `cannot run ${cmd} (${e instanceof Error ? e.message : String(e)})` };
		}
	}

	function missing(cmd: string): string {
		return `the keeper is missing: \`${cmd}\` is not installed or not on PATH — install it from a clone of the priors repository (./install.sh there, or pipx install /path/to/the/clone) or set PRIORS_BIN to its path`;
	}

	/** Show an answer: notify with a UI or in RPC mode, stdout in print and JSON modes. */
	function say(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info", aside = false,
		ui?: boolean): void {
		// `ui`: what ctx.hasUI said before an await (print mode may have closed the session since: its ctx is stale)
		if ((ui ?? ctx.hasUI) || mode === "rpc") {
			ctx.ui.notify(text, level);
			return;
		}
		if (aside && mode === "text") {
			process.stderr.write(text + "\n"); // a warning beside a prompt: stdout is the model's answer
			return;
		}
		const line = mode === "json" ? JSON.stringify({ type: "priors", level, text }) : text;
		writeSync(1, line + "\n"); // Pi sends console output to stderr in these modes; fd 1 is stdout itself
		if (level !== "info") process.exitCode = 1; // print and JSON modes: a refusal is not a success
	}

	function answer(ctx: ExtensionContext, r: Ran, failed: string): void {
		say(ctx, r.ok ? r.stdout.trim() || "priors: done" : `priors: ${failed} — ${r.why}`, r.ok ? "info" : "warning");
	}

	function warnOnce(ctx: ExtensionContext, message: string, ui?: boolean): void {
		if (message === lastWarning) return; // the same trouble on every prompt is said once
		lastWarning = message;
		say(ctx, message, "warning", true, ui);
	}

	async function refreshStatus(ctx: ExtensionContext): Promise<void> {
		if (!ctx.hasUI) return;
		const lessons = await run(ctx, ["lessons", "--all", "--json"]);
		const where = await run(ctx, ["trace", "--where", "--json"]);
		if (!lessons.ok || !where.ok) {
			ctx.ui.setStatus("priors", undefined);
			return;
		}
		try {
			const rows = JSON.parse(lessons.stdout) as LessonRow[];
			const w = JSON.parse(where.stdout) as { unscored: number; scored: number; max_traces: number };
			const active = rows.filter((x) => x.status === "accepted" || x.status === "wontfix").length;
			const proposed = rows.filter((x) => x.status === "open").length;
			ctx.ui.setStatus("priors", `priors ${active}/${proposed}p u${w.unscored}/${w.max_traces} s${w.scored}`);
		} catch {
			ctx.ui.setStatus("priors", undefined);
		}
	}

	pi.on("session_start", async (_event, ctx) => {
		await refreshStatus(ctx);
	});

	pi.on("before_agent_start", async (event, ctx) => {
		prompt = typeof event.prompt === "string" ? event.prompt.trim() : "";
		given = [];
		if (learning) {
			prompt = ""; // the reflection turn: the packet is its prompt, and it is no work to learn from
			return undefined;
		}
		if (event.systemPrompt.includes(HEADING)) return undefined; // another copy already gave it
		const args = ["lessons", "--inject", "--hold-proposals"]; // pi-prior's default: proposals wait for you
		if (prompt) args.push("--query", prompt.slice(0, MAX_QUERY));
		const key = sessionKey(ctx);
		if (key) args.push("--session", key);
		const r = await run(ctx, args);
		if (!r.ok) {
			warnOnce(ctx, `priors: lessons not added to this prompt — ${r.why}`);
			return undefined;
		}
		lastWarning = "";
		const block = r.stdout.trim();
		given = [...block.matchAll(/^- \[(P-\d+)\]/gm)].map((m) => m[1]); // for this run's trace
		if (!block) return undefined;
		return { systemPrompt: `${event.systemPrompt}\n\n${block}\n\n${PERSONS_NOTE}` };
	});

	// The model's own tools: the person's verbs and .priors/ are not for it (a guard, not a sandbox)
	pi.on("tool_call", async (event, ctx) => {
		const input = event.input as Record<string, unknown>;
		let why: string | undefined;
		if (event.toolName === "bash" && typeof input.command === "string") why = personsCommand(input.command);
		else if ((event.toolName === "write" || event.toolName === "edit") && typeof input.path === "string") {
			const rel = relative(ctx.cwd, resolve(ctx.cwd, input.path.replace(/^@/, "")));
			if (rel.split(/[\\/]/).some((part) => part.toLowerCase() === ".priors")) why = "files under .priors/ are the keeper's";
		}
		if (!why) return undefined;
		return {
			block: true,
			reason: `priors: refused — ${why}. Lessons are decided by the person with /priors; propose or revise ` +
				"one with the priors_lessons tool.",
		};
	});

	pi.on("agent_end", async (event, ctx) => {
		try {
			await keepTrace(event, ctx);
		} finally {
			learning = false;
			turnEnded?.();
			turnEnded = undefined;
		}
	});

	async function keepTrace(event: { messages: unknown[] }, ctx: ExtensionContext): Promise<void> {
		if (!prompt) return;
		const ui = ctx.hasUI; // read before any await: in print mode Pi may be closing the session meanwhile
		const assistant: string[] = [];
		const tools: { name: string; input?: unknown; output?: string; error?: boolean }[] = [];
		const calls = new Map<string, { name: string; input?: unknown }>();
		for (const m of event.messages as unknown as Record<string, unknown>[]) {
			const content = Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : [];
			if (m.role === "assistant") {
				for (const c of content) {
					if (c.type === "text" && typeof c.text === "string" && c.text.trim()) assistant.push(c.text);
					if (c.type === "toolCall" && typeof c.name === "string") calls.set(String(c.id), { name: c.name, input: c.arguments });
				}
			} else if (m.role === "toolResult") {
				const call = calls.get(String(m.toolCallId));
				const out = content.filter((c) => c.type === "text").map((c) => String(c.text)).join("\n");
				tools.push({ name: String(m.toolName ?? call?.name ?? "tool"), input: call?.input, output: out, error: m.isError === true });
			}
		}
		const trace = { prompt, given, assistant, tools };
		prompt = "";
		const dir = mkdtempSync(join(tmpdir(), "priors-trace-"));
		try {
			const file = join(dir, "trace.json");
			writeFileSync(file, JSON.stringify(trace), "utf-8");
			const args = ["trace", file];
			const key = sessionKey(ctx);
			if (key) args.push("--session", key);
			const r = await run(ctx, args);
			if (!r.ok) warnOnce(ctx, `priors: this run's trace was not kept — ${r.why}`, ui);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
		if (ui) await refreshStatus(ctx);
	}

	// ------------------------------------------------------------------ the model's tool

	pi.registerTool({
		name: "priors_lessons",
		label: "priors lessons",
		description:
			"The repository's lessons (priors). action list (status active|proposed|inactive|rejected|all), retrieve " +
			"(the lessons that fit a query), propose (a new lesson: text, optional tags) or revise (id of a lesson to " +
			"correct, text: its replacement); distinct_from: the ids of agents' lessons a DUPLICATE refusal named " +
			"that yours differs from. What you propose or revise stays proposed until a person activates it; " +
			"you cannot activate, edit, reject or delete lessons, and running the person's `priors` verbs in the shell " +
			"is refused.",
		parameters: {
			type: "object",
			properties: {
				action: { type: "string", enum: ["list", "retrieve", "propose", "revise"] },
				status: { type: "string", enum: STATUSES },
				query: { type: "string" },
				ns: { type: "string" },
				id: { type: "string" },
				text: { type: "string" },
				tags: { type: "array", items: { type: "string" } },
				note: { type: "string" },
				distinct_from: { type: "array", items: { type: "string" } },
			},
			required: ["action"],
			additionalProperties: false,
		} as unknown as Parameters<ExtensionAPI["registerTool"]>[0]["parameters"],
		async execute(_id, raw, _signal, _update, ctx) {
			const p = raw as unknown as ToolParams;
			let args: string[];
			if (p.action === "list") args = ["lessons", "--status", p.status ?? "active"];
			else if (p.action === "retrieve") args = ["lessons", "--inject", "--peek", "--query", (p.query ?? "").slice(0, MAX_QUERY)];
			else if (p.action === "propose" || p.action === "revise") {
				args = ["suggest", ...tagArgs(p.tags ?? [])];
				if (p.action === "revise") args.push("--revises", p.id ?? "");
				else args.push("--ns", p.ns ?? lessonNs());
				if (p.note) args.push("--because", p.note);
				for (const other of p.distinct_from ?? []) args.push("--distinct-from", other);
				args.push("--", p.text ?? ""); // a text that starts with a dash is text, not an option
			} else {
				return { content: [{ type: "text", text: "unknown action: use list, retrieve, propose or revise" }], details: {} };
			}
			const r = await run(ctx, args);
			const text = r.ok ? r.stdout.trim() || "no lessons" : `refused — ${r.why}`;
			return { content: [{ type: "text", text }], details: { ok: r.ok } };
		},
	});

	// ------------------------------------------------------------------ the person's commands

	async function score(words: string[], ctx: ExtensionContext): Promise<void> {
		const outcome = words.shift() ?? "";
		if (!OUTCOMES.includes(outcome)) {
			say(ctx, "usage: /priors score success|partial|failure [--again|--replace] [note]", "warning");
			return;
		}
		const key = sessionKey(ctx);
		const args = key ? ["score", outcome, "--session", key] : ["score", "last", outcome];
		const note: string[] = [];
		for (const w of words) {
			if (w === "--again" || w === "--replace") args.push(w);
			else note.push(w);
		}
		if (note.length) args.push("--because", note.join(" "));
		answer(ctx, await run(ctx, args), "not scored");
	}

	async function rows(ctx: ExtensionContext, status: string): Promise<LessonRow[] | undefined> {
		const r = await run(ctx, ["lessons", "--status", status, "--json"]);
		if (!r.ok) {
			say(ctx, `priors: cannot list lessons — ${r.why}`, "warning");
			return undefined;
		}
		try {
			return JSON.parse(r.stdout || "[]") as LessonRow[];
		} catch {
			say(ctx, "priors: the keeper's lesson list was not JSON", "warning");
			return undefined;
		}
	}

	/** `decide ID accepted`, naming the lesson it revises when a person had settled that one — only
	 * when the person named this revision (`activate ID`, review's accept, which shows what it
	 * revises): `activate all` never retires a lesson the person had accepted on a model's revision
	 * (only one the same `all` activated); the keeper's answer then says it stays in force and how
	 * to retire it. */
	async function activate(ctx: ExtensionContext, row: LessonRow, all: LessonRow[], retire = true): Promise<Ran> {
		const args = ["decide", row.id, "accepted"];
		const old = row.supersedes ? all.find((x) => x.id === row.supersedes) : undefined;
		const retiring = retire && old && (old.status === "accepted" || old.status === "wontfix");
		if (retiring) args.push("--retires", old.id);
		const r = await run(ctx, args);
		if (r.ok) {
			// `activate all` and review go on with these rows: a revision later in the list must see the
			// lesson it revises as it now stands (retired only when this call retired it)
			row.status = "accepted";
			if (retiring) old.status = "obsolete";
		}
		return r;
	}

	/** A lesson a person keeps: a your-call lesson (scored low) kept in force, which quiets the call. */
	async function keep(ctx: ExtensionContext, row: LessonRow): Promise<Ran> {
		const r = await run(ctx, ["decide", row.id, "keep"]);
		if (r.ok) row.your_call = false;
		return r;
	}

	async function activateCmd(words: string[], ctx: ExtensionContext): Promise<void> {
		const target = words[0];
		if (!target) return say(ctx, "usage: /priors activate ID|all", "warning");
		const all = await rows(ctx, "all");
		if (!all) return;
		const todo = target === "all" ? all.filter((x) => x.status === "open") : all.filter((x) => x.id === target);
		if (!todo.length) return say(ctx, target === "all" ? "priors: no proposed lessons" : `priors: there is no lesson ${target} (/priors list all)`, "warning");
		const one = todo[0];
		if (target !== "all" && (one.status === "accepted" || one.status === "wontfix")) {
			// in force already: a lesson scored low is kept (your call answered), any other is left as it is
			if (one.your_call) return answer(ctx, await keep(ctx, one), "not kept");
			return say(ctx, `priors: ${one.id} is already active`);
		}
		const out: string[] = [];
		// `all` applies a revision over a lesson only when that lesson is one this same `all` activated
		// (both were proposals): a lesson the person had already accepted stays, and the keeper says so
		const proposed = new Set(todo.map((x) => x.id));
		for (const row of todo) {
			const retire = target !== "all" || (row.supersedes !== undefined && proposed.has(row.supersedes));
			const r = await activate(ctx, row, all, retire);
			out.push(r.ok ? r.stdout.trim() : `${row.id} not activated — ${r.why}`);
		}
		say(ctx, out.join("\n"));
	}

	/** A lesson scored low over enough runs: keep it in force or retire it (the keeper's your call). */
	function yourCall(x: LessonRow): string {
		return `${x.id} (${x.ns}) ${x.claim} — scored ${x.score ?? "?"} over ${x.uses ?? "?"} runs: keep it (/priors activate ${x.id}) or retire it (/priors deactivate ${x.id})`;
	}

	async function review(ctx: ExtensionContext): Promise<void> {
		const all = await rows(ctx, "all");
		if (!all) return;
		const open = all.filter((x) => x.status === "open");
		const calls = all.filter((x) => x.your_call && (x.status === "accepted" || x.status === "wontfix"));
		if (!open.length && !calls.length) return say(ctx, "priors: nothing waits for your review — no proposed lessons, no lesson scored low");
		if (!ctx.hasUI) {
			const lines = open.map((x) => `${x.id} (${x.ns}) ${x.claim}${x.supersedes ? ` [revises ${x.supersedes}]` : ""} — /priors activate ${x.id} | /priors reject ${x.id}`);
			const parts: string[] = [];
			if (open.length) parts.push(`priors: ${plural(open.length, "proposed lesson")}:\n${lines.join("\n")}`);
			if (calls.length) parts.push(`priors: ${plural(calls.length, "lesson")} scored low — your call:\n${calls.map(yourCall).join("\n")}`);
			return say(ctx, parts.join("\n"));
		}
		const done: string[] = [];
		let ended = false;
		for (const row of open) {
			const title = `${row.id} (${row.ns})${row.supersedes ? ` revises ${row.supersedes}` : ""}: ${row.claim}`;
			const choice = await ctx.ui.select(title, ["accept", "reject", "skip"]);
			if (choice === undefined) {
				ended = true; // escape ends the review
				break;
			}
			if (choice === "skip") continue;
			const d = choice === "accept" ? await activate(ctx, row, all)
				: await run(ctx, ["decide", row.id, "obsolete", "--because", "rejected in review"]);
			done.push(d.ok ? d.stdout.trim() : `${row.id} not decided — ${d.why}`);
		}
		for (const row of ended ? [] : calls) {
			const title = `${row.id} (${row.ns}) scored ${row.score ?? "?"} over ${row.uses ?? "?"} runs: ${row.claim}`;
			const choice = await ctx.ui.select(title, ["keep", "retire", "skip"]);
			if (choice === undefined) break;
			if (choice === "skip") continue;
			const d = choice === "keep" ? await keep(ctx, row)
				: await run(ctx, ["decide", row.id, "obsolete", "--because", "retired in review (scored low)"]);
			done.push(d.ok ? d.stdout.trim() : `${row.id} not decided — ${d.why}`);
		}
		if (done.length) say(ctx, `priors:\n${done.join("\n")}`);
	}

	/** `/priors status`: pi-prior's view — lessons, what waits for you, traces, the switches. */
	async function status(ctx: ExtensionContext): Promise<void> {
		const all = await rows(ctx, "all");
		if (!all) return;
		const where = await run(ctx, ["trace", "--where", "--json"]);
		const cfg = await run(ctx, ["config"]);
		const keeper = await run(ctx, ["status", "--json"]);
		const active = all.filter((x) => x.status === "accepted" || x.status === "wontfix");
		const open = all.filter((x) => x.status === "open");
		const calls = active.filter((x) => x.your_call);
		const lines = [`priors: ${plural(active.length, "active lesson")} · ${open.length} proposed · ${all.length - active.length - open.length} inactive`];
		if (open.length) lines.push(`waiting for you: ${plural(open.length, "proposed lesson")} — /priors review (or /priors activate ID | /priors reject ID)`);
		for (const x of calls) lines.push(`your call: ${yourCall(x)}`);
		if (!open.length && !calls.length) lines.push("Nothing waits for you.");
		try {
			const c = JSON.parse(cfg.stdout || "{}") as Record<string, unknown>;
			const held = c.require_review === undefined ? true : c.require_review === true;
			lines.push(`lessons in every prompt: ${c.inject === false ? "off (/priors on)" : "on"} · proposed lessons: ${held ? "held until you activate them" : "given too (requireReview off)"}`);
		} catch {
			// no config to show
		}
		try {
			const w = JSON.parse(where.stdout) as { unscored: number; scored: number; max_traces: number };
			lines.push(`traces: ${w.unscored}/${w.max_traces} unscored, ${w.scored} scored (/priors path)`);
		} catch {
			// no traces to count
		}
		try {
			const k = JSON.parse(keeper.stdout) as { namespaces?: { open?: number }[]; open_runs?: string[] };
			const findings = (k.namespaces ?? []).reduce((n, x) => n + (x.open ?? 0), 0);
			const runs = k.open_runs?.length ?? 0;
			if (findings || runs) lines.push(`keeper runs: ${plural(findings, "open finding")}${runs ? `, ${plural(runs, "open run")}` : ""} — \`priors status\` in a shell`);
		} catch {
			// the lessons are what Pi shows
		}
		say(ctx, lines.join("\n"));
	}

	/** One setting under pi-prior's name: its value, or what leaving it unset means here. */
	function shown(key: string, value: unknown): string {
		const [, name, unset] = SHOWN.find(([k]) => k === key) ?? [key, key, "not set"];
		const v = value === undefined || value === null ? `default — ${unset}` : value === true ? "on" : value === false ? "off" : String(value);
		return `${name} = ${v}`;
	}

	async function config(words: string[], ctx: ExtensionContext): Promise<void> {
		if (!words.length) {
			const r = await run(ctx, ["config"]);
			if (!r.ok) return answer(ctx, r, "cannot read the config");
			const c = JSON.parse(r.stdout || "{}") as Record<string, unknown>;
			return say(ctx, ["priors config (.priors/config.json, committed):", ...SHOWN.map(([k]) => "  " + shown(k, c[k]))].join("\n"));
		}
		const name = words[0];
		if (NOT_CARRIED[name]) return say(ctx, `priors: ${name} is not carried — ${NOT_CARRIED[name]}`, "warning");
		const key = CONFIG_KEYS[name];
		if (!key) return say(ctx, `priors: unknown setting ${name} — ${SHOWN.map(([, n]) => n).join(", ")}`, "warning");
		if (words.length < 2) {
			const r = await run(ctx, ["config"]);
			if (!r.ok) return answer(ctx, r, "cannot read the config");
			return say(ctx, shown(key, (JSON.parse(r.stdout || "{}") as Record<string, unknown>)[key]));
		}
		const r = await run(ctx, ["config", key, words[1]]);
		if (!r.ok) return answer(ctx, r, "not set");
		const set = /^\S+ = (.*)$/.exec(r.stdout.trim());
		const value = set ? (set[1] === "true" ? true : set[1] === "false" ? false : set[1] === "none" ? undefined : set[1]) : words[1];
		say(ctx, shown(key, value));
	}

	async function prune(words: string[], ctx: ExtensionContext): Promise<void> {
		if (words[0] === "scored") {
			if (!/^\d+$/.test(words[1] ?? "")) return say(ctx, "usage: /priors prune scored N", "warning");
			return answer(ctx, await run(ctx, ["trace", "--prune-scored", words[1]]), "not pruned");
		}
		if (words[0] === "unscored") words.shift();
		let n = words[0];
		if (!n) {
			const w = await run(ctx, ["trace", "--where", "--json"]);
			n = w.ok ? String((JSON.parse(w.stdout) as { max_traces: number }).max_traces) : "100";
		}
		answer(ctx, await run(ctx, ["trace", "--prune", n]), "not pruned");
	}

	async function learn(words: string[], ctx: ExtensionCommandContext): Promise<void> {
		const args = ["reflect", "--json"];
		let dry = false;
		let mark = false;
		for (let i = 0; i < words.length; i++) {
			const w = words[i];
			if (w === "--dry-run") dry = true;
			else if (w === "--include-learned") args.push(w);
			else if (w === "--mark-existing") mark = true;
			else if (/^\d+$/.test(w)) args.push(w);
			else return say(ctx, "usage: /priors learn [N] [--dry-run] [--mark-existing [N]] [--include-learned]", "warning");
		}
		if (dry) args.push("--dry-run");
		if (mark) args.push("--mark-existing");
		const r = await run(ctx, args);
		if (!r.ok) return say(ctx, `priors: nothing learned — ${r.why}`, "warning");
		const out = JSON.parse(r.stdout) as { packet?: string; runs?: string[]; marked?: string[] };
		if (mark) return say(ctx, `priors: ${dry ? "would mark" : "marked"} ${(dry ? out.runs : out.marked)?.length ?? 0} scored run(s) as learned`);
		if (!out.packet) return say(ctx, "priors: nothing to reflect on — no scored runs left unlearned (score runs with /priors score)");
		if (dry) return say(ctx, `priors: wrote ${out.packet} (dry run: nothing marked learned, no model turn)`);
		const packet = readFileSync(join(ctx.cwd, out.packet), "utf-8");
		say(ctx, `priors: ${out.packet} — asking the model for lessons (they stay proposed until you activate them)`);
		const ended = new Promise<void>((done) => {
			turnEnded = done;
		});
		learning = true;
		pi.sendUserMessage(
			`${packet}\n\nYou are in a coding session, not a keeper run: propose at most three lessons with the ` +
			"priors_lessons tool (action \"propose\"; action \"revise\" with the id of a lesson to correct instead of " +
			"duplicating it). Do not activate anything: a person reviews your proposals with /priors review.",
		);
		await ended; // print mode would otherwise close the session under the turn
	}

	/** `/priors export FILE [--force]`: a file inside the repository, never over a file that is not
	 * an earlier export unless the person says --force (a mistyped a.py is not overwritten). */
	async function exportCmd(words: string[], ctx: ExtensionContext): Promise<void> {
		const force = words.includes("--force");
		const names = words.filter((w) => w !== "--force");
		if (names.length > 1) return say(ctx, "usage: /priors export [FILE [--force]]", "warning");
		const file = names[0];
		if (!file) return answer(ctx, await run(ctx, ["export"]), "not exported");
		const where = await run(ctx, ["trace", "--where", "--json"]);
		if (!where.ok) return answer(ctx, where, "not exported");
		const root = (JSON.parse(where.stdout) as { root: string }).root;
		const target = resolve(ctx.cwd, file);
		const rel = relative(root, target);
		if (!rel || rel.startsWith("..") || isAbsolute(rel)) {
			return say(ctx, `priors: not exported — ${file} is outside the repository (${root}): name a file inside it`, "warning");
		}
		let exists = false;
		try {
			exists = statSync(target).isFile();
		} catch {
			exists = false;
		}
		if (exists && !force && !earlierExport(target)) {
			return say(ctx, `priors: not exported — ${file} exists and is not an earlier export: name another file, or add --force to replace it`, "warning");
		}
		answer(ctx, await run(ctx, ["export", "-o", target]), "not exported");
	}

	function earlierExport(path: string): boolean {
		try {
			return (JSON.parse(readFileSync(path, "utf-8")) as { format?: unknown }).format === "priors-lessons";
		} catch {
			return false;
		}
	}

	async function importCmd(words: string[], ctx: ExtensionContext): Promise<void> {
		const [file, how] = words;
		if (!file) return say(ctx, "usage: /priors import FILE [merge]", "warning");
		if (how === "replace") {
			return say(ctx, "priors: import replace is not carried — the ledger is append-only: import merges, and you retire what no longer applies with /priors deactivate ID", "warning");
		}
		if (how && how !== "merge") return say(ctx, "usage: /priors import FILE [merge]", "warning");
		answer(ctx, await run(ctx, ["import", "--ns", lessonNs(), "--", file]), "not imported");
	}

	async function write(ctx: ExtensionContext, args: string[], failed: string): Promise<void> {
		answer(ctx, await run(ctx, args), failed);
		await refreshStatus(ctx);
	}

	async function handle(args: string, ctx: ExtensionCommandContext): Promise<void> {
		const words = args.trim().split(/\s+/).filter((w) => w.length > 0);
		const sub = words.shift() ?? "";
		const id = words[0] ?? "";
		switch (sub) {
			case "status":
				return status(ctx);
			case "on":
			case "off":
				await config(["inject", sub], ctx);
				return refreshStatus(ctx);
			case "config":
				return config(words, ctx);
			case "path":
				return answer(ctx, await run(ctx, ["trace", "--where"]), "no paths");
			case "prune":
				return prune(words, ctx);
			case "list": {
				const status = words[0] ?? "active";
				if (!STATUSES.includes(status)) return say(ctx, "usage: /priors list [active|proposed|inactive|rejected|all]", "warning");
				return answer(ctx, await run(ctx, ["lessons", "--status", status]), "cannot list lessons");
			}
			case "add":
			case "propose": {
				const { tags, text } = tagsAndText(words);
				if (!text) return say(ctx, `usage: /priors ${sub} [#tag …] TEXT`, "warning");
				const verb = sub === "add" ? ["add"] : ["suggest"];
				return write(ctx, [...verb, "--ns", lessonNs(), ...tagArgs(tags), "--", text], `not ${sub === "add" ? "added" : "proposed"}`);
			}
			case "revise":
			case "edit": {
				words.shift();
				const { tags, text } = tagsAndText(words);
				if (!/^P-\d+$/.test(id) || !text) return say(ctx, `usage: /priors ${sub} ID [#tag …] TEXT`, "warning");
				const verb = sub === "revise" ? ["suggest", "--revises", id] : ["add", "--supersedes", id];
				return write(ctx, [...verb, ...tagArgs(tags), "--", text], `not ${sub === "revise" ? "proposed" : "edited"}`);
			}
			case "activate":
				await activateCmd(words, ctx);
				return refreshStatus(ctx);
			case "deactivate":
			case "reject": {
				if (!id) return say(ctx, `usage: /priors ${sub} ID`, "warning");
				const all = await rows(ctx, "all");
				if (!all) return;
				const row = all.find((x) => x.id === id);
				const failed = sub === "reject" ? "not rejected" : "not deactivated";
				if (!row) return say(ctx, `priors: ${failed} — there is no lesson ${id} (/priors list all)`, "warning");
				if (row.status === "obsolete") return say(ctx, `priors: ${id} is already inactive`);
				return write(ctx, ["decide", id, "obsolete", "--because", sub === "reject" ? "rejected in Pi" : "deactivated in Pi"], failed);
			}
			case "delete": {
				if (!id) return say(ctx, "usage: /priors delete ID", "warning");
				if (ctx.hasUI && !(await ctx.ui.confirm(`Delete ${id} for good?`, DELETES))) {
					return say(ctx, `priors: ${id} kept`);
				}
				return write(ctx, ["redact", id, "--because", "deleted in Pi"], "not deleted");
			}
			case "review":
				await review(ctx);
				return refreshStatus(ctx);
			case "score":
				await score(words, ctx);
				return refreshStatus(ctx);
			case "learn":
				return learn(words, ctx);
			case "export":
				return exportCmd(words, ctx);
			case "import":
				await importCmd(words, ctx);
				return refreshStatus(ctx);
			case "":
			case "help":
				return say(ctx, USAGE);
			default:
				return say(ctx, `priors: unknown command /priors ${sub}\n${USAGE}`, "warning");
		}
	}

	const SUBS = ["status", "on", "off", "config", "path", "prune", "list", "add", "propose", "revise", "edit", "activate",
		"deactivate", "reject", "delete", "review", "score success", "score partial", "score failure", "learn", "export", "import"];

	pi.registerCommand("priors", {
		description: "priors lessons: status · list · add · propose · revise · edit · activate · deactivate · reject · delete · review · score · learn · config · on/off · prune · path · export · import",
		getArgumentCompletions: (prefix: string) => {
			const items = SUBS.filter((v) => v.startsWith(prefix)).map((v) => ({ value: v, label: v }));
			return items.length ? items : null;
		},
		handler: async (args, ctx) => handle(args, ctx),
	});
}
